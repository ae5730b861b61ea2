import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { destroyTestService, startTestService, type TestService } from '../helpers/harness';

let t: TestService;
beforeAll(async () => {
  t = await startTestService({ workers: false });
});
afterAll(async () => destroyTestService(t));

const url = '/api/internal/openapi.json';

describe('GET /api/internal/openapi.json', () => {
  it('needs the admin JWT like every internal route', async () => {
    const res = await t.request({ method: 'GET', url });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ error: 'unauthorized' });
  });

  it('publishes every internal operation, from the schemas the routes parse with', async () => {
    const res = await t.request({ method: 'GET', url, admin: true });
    expect(res.statusCode).toBe(200);
    const doc = res.json();
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.servers).toEqual([{ url: 'http://svc.test/api/internal' }]);
    expect(doc.components.securitySchemes.adminJwt).toEqual({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' });
    const operations = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([path, ops]) =>
      Object.keys(ops).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(operations.sort()).toEqual(
      [
        'POST /brands',
        'GET /brands',
        'POST /brands/{id}/api-keys',
        'POST /brands/{id}/portal-users',
        'POST /creators',
        'GET /creators',
        'GET /creators/{id}',
        'POST /campaigns',
        'GET /campaigns',
        'POST /placements',
        'POST /placement-metrics',
        'GET /attribution-domains',
        'GET /attribution-domains/{id}',
        'POST /attribution-domains',
        'POST /attribution-domains/{id}/check',
        'DELETE /attribution-domains/{id}',
        'GET /attribution-links',
        'GET /attribution-links/{id}',
        'POST /attribution-links',
        'PATCH /attribution-links/{id}',
        'GET /attribution-codes',
        'GET /attribution-codes/{id}',
        'POST /attribution-codes',
        'PATCH /attribution-codes/{id}',
        'DELETE /attribution-codes/{id}',
        'GET /attribution-connections',
        'DELETE /attribution-connections/{id}',
        'GET /webhook-endpoints',
        'PATCH /webhook-endpoints/{id}',
        'GET /openapi.json',
      ].sort(),
    );
    // The document itself is not public: no operation overrides the admin JWT.
    expect(doc.paths['/openapi.json'].get.security).toBeUndefined();

    const createLink = doc.paths['/attribution-links'].post;
    const body = createLink.requestBody.content['application/json'].schema;
    expect(body.required).toEqual(expect.arrayContaining(['brand_id', 'creator_id', 'domain_id', 'slug', 'type', 'destination_url']));
    expect(body.properties.type.enum).toEqual(['web', 'app']);
    expect(Object.keys(createLink.responses).sort()).toEqual(['201', '401', '403', '409', '422', '503']);
    expect(createLink.responses['409'].content['application/json'].schema.properties.error.description).toBe('slug_taken');

    const listCodes = doc.paths['/attribution-codes'].get;
    const limit = listCodes.parameters.find((p: { name: string }) => p.name === 'limit');
    expect(limit).toMatchObject({ in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 100, default: 50 } });
    expect(doc.paths['/attribution-codes/{id}'].delete.parameters).toEqual([{ name: 'id', in: 'path', required: true, schema: { type: 'string', examples: [expect.any(String)] } }]);
    expect(doc.paths['/placements'].post.responses['202'].content['application/json'].schema.properties).toHaveProperty('accepted');
  });
});
