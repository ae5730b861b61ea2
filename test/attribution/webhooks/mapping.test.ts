import { describe, expect, it } from 'vitest';
import { decimalAmount, minorUnits, money, parseJsonKeepingBigIntegers, transactionKey, userId, uuidOrNull } from '../../../src/attribution/webhooks/mapping';
import { SecretBox } from '../../../src/attribution/webhooks/secret-box';

describe('connector helpers', () => {
  it('keeps integers beyond 2^53 exact, and leaves strings and small numbers alone', () => {
    const body = Buffer.from('{"id":820982911946154508,"n":-12.5e3,"s":"a \\"quoted\\" 820982911946154508","list":[1,99999999999999999999],"ok":true}');
    expect(parseJsonKeepingBigIntegers(body)).toEqual({
      id: '820982911946154508',
      n: -12500,
      s: 'a "quoted" 820982911946154508',
      list: [1, '99999999999999999999'],
      ok: true,
    });
    expect(() => parseJsonKeepingBigIntegers(Buffer.from('{"id":'))).toThrow();
  });

  it('builds <store>:<id> keys, never cut (a key over 128 characters is refused when recorded)', () => {
    expect(transactionKey('apple', '2000000871234567')).toBe('apple:2000000871234567');
    expect(transactionKey('stripe', 'x'.repeat(200))).toBe(`stripe:${'x'.repeat(200)}`);
  });

  it('reads amounts only in the provider\'s own form, never coercing', () => {
    expect(decimalAmount('64.00')).toBe(64);
    expect(decimalAmount(12.5)).toBe(12.5);
    for (const bad of ['', '0x10', '1e3', ' 5', '-5', '5.', null, undefined, true, Number.NaN]) {
      expect(() => decimalAmount(bad), String(bad)).toThrow('unrecordable_values');
    }
    expect(minorUnits(4900)).toBe(4900);
    // 2 ** 53: what JSON.parse makes of 9007199254740993.
    for (const bad of [1.5, '4900', 2 ** 53, null, Number.POSITIVE_INFINITY]) {
      expect(() => minorUnits(bad), String(bad)).toThrow('unrecordable_values');
    }
  });

  it('keeps supported currencies, else the provider\'s USD figure, else the number as USD', () => {
    expect(money(9.99, 'eur', 10.84)).toEqual({ amount: 9.99, currency: 'EUR' });
    expect(money(980, 'JPY', 6.5)).toEqual({ amount: 6.5, currency: 'USD' });
    expect(money(980, 'JPY')).toEqual({ amount: 980, currency: 'USD' });
    expect(money(null, 'GBP', null)).toEqual({ amount: 0, currency: 'USD' });
  });

  it('lowercases UUID-shaped user ids and accepts only well-formed UUIDs as appAccountToken', () => {
    expect(userId('  ', null, 'C0FFEE00-1111-4222-8333-444455556666')).toBe('c0ffee00-1111-4222-8333-444455556666');
    expect(userId(7011000000002)).toBe('7011000000002');
    expect(uuidOrNull('not-a-uuid')).toBeNull();
    expect(uuidOrNull('c0ffee00-1111-4222-8333-44445555666')).toBeNull();
  });
});

describe('secret box', () => {
  it('opens only under the same key and context', () => {
    const box = new SecretBox('test-secret-key-0123456789');
    const sealed = box.seal('whsec_abc', 'conn-1:signing_secret');
    expect(sealed).not.toContain('whsec_abc');
    expect(box.open(sealed, 'conn-1:signing_secret')).toBe('whsec_abc');
    expect(() => box.open(sealed, 'conn-2:signing_secret')).toThrow();
    expect(() => new SecretBox('another-secret-key-0123456').open(sealed, 'conn-1:signing_secret')).toThrow();
    expect(box.seal('whsec_abc', 'c')).not.toBe(box.seal('whsec_abc', 'c')); // a fresh IV each time
  });
});
