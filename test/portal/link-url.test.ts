import { describe, expect, it } from 'vitest';
import { linkUrl } from '../../src/portal/web/link-url';

describe("the portal's link address (Links page copy button)", () => {
  it('is http on the portal port for a name under localhost, which the service answers on this machine', () => {
    expect(linkUrl({ domain: 'go-1a2b3c4d.localhost', slug: 'c1' }, { port: '3000' })).toBe('http://go-1a2b3c4d.localhost:3000/c1');
    expect(linkUrl({ domain: 'localhost', slug: 'spring' }, { port: '8080' })).toBe('http://localhost:8080/spring');
  });

  it('names no port when the portal is served on the default one', () => {
    expect(linkUrl({ domain: 'go-1a2b3c4d.localhost', slug: 'c1' }, { port: '' })).toBe('http://go-1a2b3c4d.localhost/c1');
  });

  it('is https with no port on a real domain, whatever port the portal is on', () => {
    expect(linkUrl({ domain: 'go.acme.com', slug: 'maya' }, { port: '3000' })).toBe('https://go.acme.com/maya');
    expect(linkUrl({ domain: 'notlocalhost.com', slug: '' }, { port: '3000' })).toBe('https://notlocalhost.com/');
  });
});
