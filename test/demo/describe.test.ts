import { describe, expect, it } from 'vitest';
import { describeDemo } from '../../src/demo';

describe('describeDemo', () => {
  it('prints the portal page next to its login, the API key with a curl line, and the API reference', () => {
    const text = describeDemo(
      [{ id: 'b-1', name: 'Northwind Coffee', apiKey: 'sk_demo', portal: { email: 'demo@northwind.test', password: 'pw-123' } }],
      'https://svc.example',
    );
    expect(text.split('\n')).toEqual([
      'Demo brand "Northwind Coffee" (b-1)',
      '  API key:      sk_demo',
      '  Portal:       https://svc.example/portal/  (log in as demo@northwind.test / pw-123)',
      '  Try:          curl -H "Authorization: Bearer sk_demo" https://svc.example/api/v1/metrics/summary',
      '  API docs:     https://svc.example/docs/api',
    ]);
  });
});
