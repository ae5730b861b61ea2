import { describe, expect, it } from 'vitest';
import { describeDemo } from '../../src/demo';

describe('describeDemo', () => {
  it('prints the portal page next to its login, both keys, a curl line, the API reference and both creator links with the port', () => {
    const text = describeDemo(
      [
        {
          id: 'b-1',
          name: 'Northwind Coffee',
          apiKey: 'sk_demo',
          pixelKey: 'pk_demo',
          portal: { email: 'demo@northwind.test', password: 'pw-123' },
          links: { hostname: 'go-b1.localhost', web: 'c1', app: 'app' },
        },
      ],
      'https://svc.example',
      3000,
    );
    expect(text.split('\n')).toEqual([
      'Demo brand "Northwind Coffee" (b-1)',
      '  Portal:       https://svc.example/portal/  (log in as demo@northwind.test / pw-123)',
      '  API key:      sk_demo',
      '  Try:          curl -H "Authorization: Bearer sk_demo" https://svc.example/api/v1/metrics/summary',
      '  Pixel key:    pk_demo',
      '  API docs:     https://svc.example/docs/api',
      '  Creator links (open them in a browser on this machine):',
      '    web link:   http://go-b1.localhost:3000/c1  (redirects to the shop, with a click token)',
      '    app link:   http://go-b1.localhost:3000/app  (the smart install page)',
    ]);
  });
});
