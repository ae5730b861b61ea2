import { compileErrors, validate as readmeValidate } from '@readme/openapi-parser';
import { Validator } from '@seriousme/openapi-schema-validator';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attributionBrand, type AttributionBrand, postPublic, uniqueId } from '../attribution/public/setup';
import { destroyTestService, startTestService, type TestService } from '../helpers/harness';

/**
 * Every OpenAPI document the service serves, as outside tools read them: valid for two
 * validators, every schema with an example that passes the schema itself (Swagger UI and
 * client generators otherwise make values up), the shared refusals (429, 503) declared, and
 * the public attribution document's answers the ones the endpoints give.
 */
let t: TestService;
let acme: AttributionBrand;
beforeAll(async () => {
  t = await startTestService();
  acme = await attributionBrand(t, 'Docs');
});
afterAll(async () => destroyTestService(t));

const DOCUMENTS = {
  'Data API': '/api/v1/openapi.json',
  'Portal API': '/api/client/openapi.json',
  'Attribution API': '/api/public/attribution/openapi.json',
  'Internal API': '/api/internal/openapi.json',
};

type Json = Record<string, unknown>;
type Operation = { operationId?: string; security?: unknown[]; parameters?: { name: string; schema: Json }[]; requestBody?: { content: Record<string, { schema: Json }> }; responses: Record<string, { content?: Record<string, { schema: Json }>; headers?: Json }> };

async function served(url: string): Promise<Json> {
  const res = await t.request({ method: 'GET', url, admin: url.startsWith('/api/internal') });
  expect(res.statusCode, url).toBe(200);
  return res.json();
}

const operations = (doc: Json) =>
  Object.entries(doc.paths as Record<string, Record<string, Operation>>).flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ name: `${method.toUpperCase()} ${path}`, op })));

/** Every schema of the document's operations and components, with the name it is known by. */
function schemas(doc: Json): { where: string; schema: Json }[] {
  const found: { where: string; schema: Json }[] = [];
  const walk = (s: unknown, where: string) => {
    if (!s || typeof s !== 'object' || Array.isArray(s)) return;
    const schema = s as Json;
    found.push({ where, schema });
    for (const [field, sub] of Object.entries((schema.properties as Json) ?? {})) walk(sub, `${where}.${field}`);
    walk(schema.items, `${where}[]`);
    if (typeof schema.additionalProperties === 'object') walk(schema.additionalProperties, `${where}{}`);
    for (const key of ['anyOf', 'oneOf', 'allOf']) for (const [i, sub] of ((schema[key] as unknown[]) ?? []).entries()) walk(sub, `${where}|${i}`);
  };
  for (const { name, op } of operations(doc)) {
    for (const p of op.parameters ?? []) walk(p.schema, `${name} ?${p.name}`);
    for (const [type, media] of Object.entries(op.requestBody?.content ?? {})) walk(media.schema, `${name} body ${type}`);
    for (const [status, answer] of Object.entries(op.responses)) {
      for (const [type, media] of Object.entries(answer.content ?? {})) if (type === 'application/json') walk(media.schema, `${name} ${status}`);
    }
  }
  for (const [id, schema] of Object.entries(((doc.components as Json).schemas as Json) ?? {})) walk(schema, `#/components/schemas/${id}`);
  return found;
}

const isLeaf = (s: Json) => s.type !== undefined && s.type !== 'null' && !s.properties && !s.items && !s.anyOf && !s.$ref && s.type !== 'object' && s.type !== 'array';

function validatorFor(doc: Json) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema({ $id: 'doc', components: doc.components }, 'doc');
  // References point into the document: resolved against it.
  return (schema: Json) => ajv.compile(JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"doc#/components/')));
}

describe.each(Object.entries(DOCUMENTS))('%s document', (name, url) => {
  it('is valid OpenAPI 3.1 for two validators', async () => {
    const doc = await served(url);
    expect(doc.openapi).toBe('3.1.0');
    const seriousme = await new Validator().validate(structuredClone(doc));
    expect(seriousme.errors ?? [], JSON.stringify(seriousme.errors)).toEqual([]);
    expect(seriousme.valid).toBe(true);
    const readme = await readmeValidate(structuredClone(doc) as never);
    expect(readme.valid, readme.valid ? '' : compileErrors(readme)).toBe(true);
    // Descriptions are Markdown: a placeholder such as <key> outside a code span would be dropped as a tag.
    const prose: string[] = [];
    JSON.stringify(doc, (key, value) => {
      if ((key === 'description' || key === 'summary') && typeof value === 'string') prose.push(value);
      return value;
    });
    expect(prose.filter((text) => text.split('`').some((part, i) => i % 2 === 0 && /<[a-z]/i.test(part)))).toEqual([]);
    // Client generators name each call by its operationId: every operation has one of its own.
    const ids = operations(doc).map(({ op }) => op.operationId);
    expect(ids.filter((id) => !id)).toEqual([]);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('gives every value an example that its own schema accepts, and no bound of ±(2^53 - 1)', async () => {
    const doc = await served(url);
    expect(JSON.stringify(doc)).not.toContain('9007199254740991');
    const compile = validatorFor(doc);
    const all = schemas(doc);
    const without = all.filter(({ schema }) => isLeaf(schema) && schema.enum === undefined && schema.const === undefined && schema.examples === undefined);
    expect(without.map((s) => s.where)).toEqual([]);
    let checked = 0;
    for (const { where, schema } of all) {
      if (!Array.isArray(schema.examples)) continue;
      const { examples, ...rest } = schema;
      const check = compile(rest);
      for (const example of examples) expect(check(example), `${where}: ${JSON.stringify(example)} ${JSON.stringify(check.errors)}`).toBe(true);
      checked++;
    }
    expect(checked).toBeGreaterThan(5);
  });

  it('declares 503 unavailable on every operation but the document itself, and 429 rate_limited where a limit counts', async () => {
    const doc = await served(url);
    for (const { name: op, op: operation } of operations(doc)) {
      if (operation.operationId === 'openapi') continue;
      expect(Object.keys(operation.responses), op).toContain('503');
      const limited = name === 'Attribution API' || (name !== 'Internal API' && !(Array.isArray(operation.security) && operation.security.length === 0));
      if (limited) expect(operation.responses['429']?.headers, op).toHaveProperty('Retry-After');
    }
  });
});

describe('the attribution API document', () => {
  const answerSchema = async (op: string, status: number) => {
    const doc = await served(DOCUMENTS['Attribution API']);
    const [method, path] = op.split(' ');
    const operation = (doc.paths as Record<string, Record<string, Operation>>)[path!]![method!.toLowerCase()]!;
    return validatorFor(doc)(operation.responses[status]!.content!['application/json']!.schema);
  };

  it('documents clicks, installs and events, with the pixel key each install and event must carry', async () => {
    const doc = await served(DOCUMENTS['Attribution API']);
    const paths = doc.paths as Record<string, Record<string, Operation>>;
    for (const path of ['/clicks', '/installs', '/events']) expect(paths[path]?.post, path).toBeDefined();
    for (const path of ['/installs', '/events']) {
      const body = paths[path]!.post!.requestBody!.content['application/json']!.schema;
      expect(body.required, path).toContain('pixel_key');
      expect(Object.keys(paths[path]!.post!.responses), path).toEqual(expect.arrayContaining(['403', '413', '422', '429', '503']));
    }
    expect((doc.servers as { url: string }[])[0]!.url).toBe('http://svc.test/api/public/attribution');
  });

  it('shows an SDK platform (ios or android) as the installs and opens platform, never a social one', async () => {
    const doc = await served(DOCUMENTS['Attribution API']);
    const paths = doc.paths as Record<string, Record<string, Operation>>;
    for (const path of ['/installs', '/opens']) {
      const body = paths[path]!.post!.requestBody!.content['application/json']!.schema as { properties: Record<string, { examples?: unknown[] }> };
      expect(body.properties.platform!.examples, path).toEqual(['ios']);
    }
  });

  it('describes the answers the endpoints give', async () => {
    const click = await postPublic(t, 'clicks', { domain: acme.hostname, slug: 'app', user_agent: 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X)' });
    const clickOk = await answerSchema('POST /clicks', 200);
    expect(clickOk(click.json()), JSON.stringify(clickOk.errors)).toBe(true);

    const installId = uniqueId('install');
    const installed = await postPublic(t, 'installs', { pixel_key: acme.brand.pixel_key, install_id: installId, platform: 'ios', clipboard_token: click.json().click_token });
    expect(installed.statusCode).toBe(201);
    const created = await answerSchema('POST /installs', 201);
    expect(created(installed.json()), JSON.stringify(created.errors)).toBe(true);
    const again = await postPublic(t, 'installs', { pixel_key: acme.brand.pixel_key, install_id: installId, platform: 'ios' });
    const retried = await answerSchema('POST /installs', 200);
    expect(retried(again.json()), JSON.stringify(retried.errors)).toBe(true);

    const event = await postPublic(t, 'events', { pixel_key: acme.brand.pixel_key, transaction_id: uniqueId('order'), amount: 9.99, currency: 'EUR' });
    const recorded = await answerSchema('POST /events', 200);
    expect(recorded(event.json()), JSON.stringify(recorded.errors)).toBe(true);
  });

  it('is served to any origin, like the endpoints it describes', async () => {
    const res = await t.request({ method: 'GET', url: DOCUMENTS['Attribution API'], headers: { origin: 'https://shop.example' } });
    expect(res.headers['access-control-allow-origin']).toBe('*');
  });
});
