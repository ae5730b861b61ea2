import { describe, expect, it } from 'vitest';
import { addressKey, trustedProxies } from '../src/client-address';

describe('trustedProxies (TRUST_PROXY)', () => {
  it('trusts IPv4 addresses, CIDRs and netmasks, and nothing beside them', () => {
    const trusted = trustedProxies('10.1.2.3, 192.168.0.0/16, 172.16.0.0/255.240.0.0');
    expect(['10.1.2.3', '192.168.0.1', '192.168.255.255', '172.16.0.1', '172.31.255.254'].filter(trusted)).toHaveLength(5);
    expect(['10.1.2.4', '192.169.0.1', '172.32.0.1', '8.8.8.8', '0.0.0.0', '255.255.255.255'].filter(trusted)).toEqual([]);
  });

  it('trusts the named ranges in both families', () => {
    const trusted = trustedProxies('loopback,linklocal,uniquelocal');
    expect(['127.0.0.1', '127.255.0.9', '::1', '169.254.1.1', 'fe80::1', '10.0.0.1', '172.20.1.1', '192.168.1.1', 'fd00::5'].filter(trusted)).toHaveLength(9);
    expect(['128.0.0.1', '::2', '2001:db8::1', '11.0.0.1', '172.15.0.1'].filter(trusted)).toEqual([]);
  });

  it('checks an IPv4-mapped IPv6 address as its IPv4 form, and IPv6 ranges as IPv6', () => {
    const trusted = trustedProxies('10.0.0.0/8,2001:db8::/32');
    expect(trusted('::ffff:10.9.8.7')).toBe(true);
    expect(trusted('::ffff:11.9.8.7')).toBe(false);
    expect(trusted('2001:db8:1::1')).toBe(true);
    expect(trusted('2001:db9::1')).toBe(false);
  });

  it('trusts no malformed address: leading zeros, out-of-range octets, text, nothing', () => {
    const trusted = trustedProxies('0.0.0.0/0');
    expect(['1.2.3.4', '0.0.0.0', '255.255.255.255', '10.0.100.9'].filter(trusted)).toHaveLength(4);
    const malformed = ['01.2.3.4', '1.2.3.00', '1.2.3.256', '1.2.3.1000', '1.2.3', '1.2.3.4.5', '1..2.3', '.1.2.3', '1.2.3.4.', 'a.b.c.d', '', ' 1.2.3.4', undefined];
    expect(malformed.filter(trusted)).toEqual([]);
  });

  it('true trusts everyone and false no one', () => {
    expect(trustedProxies(true)('8.8.8.8')).toBe(true);
    expect(trustedProxies(false)('127.0.0.1')).toBe(false);
  });
});

describe('addressKey', () => {
  it('keys IPv6 by its /64, IPv4-mapped by the IPv4 form, IPv4 by itself', () => {
    expect(addressKey('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(addressKey('::ffff:1.2.3.4')).toBe('1.2.3.4');
    expect(addressKey('1.2.3.4')).toBe('1.2.3.4');
  });
});
