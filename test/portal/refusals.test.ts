import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createConnectionBody } from '../../src/attribution/webhooks/connections';
import { SETTINGS_SCHEMAS } from '../../src/attribution/webhooks/providers';
import { zodDetails } from '../../src/http/errors';
import { refusalInWords } from '../../src/portal/web/refusals';

/** The 422 details the API answers when `schema` refuses `value`. */
function details(schema: z.ZodType, value: unknown) {
  const parsed = schema.safeParse(value);
  if (parsed.success) throw new Error('expected a refusal');
  return zodDetails(parsed.error);
}

/** The words the portal shows for those details. */
const words = (schema: z.ZodType, value: unknown): string => refusalInWords(details(schema, value));

describe('422 invalid_request in the portal, in words (src/portal/web/refusals.ts)', () => {
  it('says which field is too long or too short, with the limit zod names', () => {
    expect(words(createConnectionBody, { provider: 'stripe', signing_secret: 'x'.repeat(501) })).toBe(
      'The signing secret is too long (500 characters at most).',
    );
    expect(words(SETTINGS_SCHEMAS.apple, { bundle_id: 'a'.repeat(256), app_apple_id: -1 })).toBe(
      'The bundle_id is too long (255 characters at most). The app_apple_id must be above 0.',
    );
    expect(words(SETTINGS_SCHEMAS.apple, { bundle_id: ' ' })).toBe('Fill in the bundle_id.');
  });

  it('asks for a missing field, and names the kind of value a field takes', () => {
    expect(words(SETTINGS_SCHEMAS.apple, {})).toBe('Fill in the bundle_id.');
    expect(words(SETTINGS_SCHEMAS.apple, { bundle_id: 'com.acme', app_apple_id: 1.5 })).toBe('The app_apple_id must be a whole number.');
    expect(words(SETTINGS_SCHEMAS.stripe, { first_invoice_as_purchase: 'yes' })).toBe('The first_invoice_as_purchase must be true or false.');
    expect(words(SETTINGS_SCHEMAS.adapty, { event_name_map: 'renamed' })).toBe('The event_name_map must be a JSON object.');
  });

  it('lists the values a choice takes, and says what form a value must have', () => {
    expect(words(SETTINGS_SCHEMAS.apple, { bundle_id: 'com.acme', environment: 'staging' })).toBe(
      'The environment must be one of: both, production, sandbox.',
    );
    expect(words(createConnectionBody, { provider: 'paypal' })).toBe('The provider must be one of: revenuecat, adapty, stripe, shopify, apple.');
    expect(words(SETTINGS_SCHEMAS.shopify, { shop_domain: 'acme.com' })).toBe(
      'The shop_domain is not in the right form (the shop domain, <shop>.myshopify.com).',
    );
    expect(words(SETTINGS_SCHEMAS.adapty, { event_name_map: { Bought: 'Sub Started' } })).toBe(
      'The event_name_map\'s "Bought" is not in the right form (an Adapty event name).',
    );
    expect(words(SETTINGS_SCHEMAS.stripe, { first_invoice: true })).toBe('The service does not take first_invoice.');
  });

  it("answers zod's own fields besides path, message and code, and whether a value was missing", () => {
    expect(details(SETTINGS_SCHEMAS.apple, { app_apple_id: 0 })).toEqual([
      { path: 'bundle_id', message: 'Invalid input: expected string, received undefined', code: 'invalid_type', expected: 'string', missing: true },
      { path: 'app_apple_id', message: 'Too small: expected number to be >0', code: 'too_small', origin: 'number', minimum: 0, inclusive: false },
    ]);
    expect(details(SETTINGS_SCHEMAS.apple, { bundle_id: 'com.acme', app_apple_id: null })).toEqual([
      { path: 'app_apple_id', message: 'Invalid input: expected number, received null', code: 'invalid_type', expected: 'number', missing: false },
    ]);
    expect(details(createConnectionBody, { provider: 'paypal' })).toEqual([
      expect.objectContaining({ path: 'provider', code: 'invalid_value', values: ['revenuecat', 'adapty', 'stripe', 'shopify', 'apple'] }),
    ]);
    expect(details(SETTINGS_SCHEMAS.stripe, { first_invoice: true })).toEqual([
      { path: '', message: 'Unrecognized key: "first_invoice"', code: 'unrecognized_keys', keys: ['first_invoice'] },
    ]);
    // A value sent as null is not missing.
    expect(words(SETTINGS_SCHEMAS.apple, { bundle_id: 'com.acme', app_apple_id: null })).toBe('The app_apple_id must be a number.');
  });

  it('takes numbers and choices from those fields, where the message would mislead', () => {
    // The message quotes the key as is: `Unrecognized key: "first "invoice""`.
    expect(words(SETTINGS_SCHEMAS.stripe, { 'first "invoice"': true })).toBe('The service does not take first "invoice".');
    // The message reads "<=0.5" and "expected one of 7|30|90"; a custom message names no limit.
    expect(words(z.object({ share: z.number().max(0.5) }), { share: 0.8 })).toBe('The share is too large (0.5 at most).');
    expect(words(z.object({ days: z.literal([7, 30, 90]) }), { days: 14 })).toBe('The days must be one of: 7, 30, 90.');
    expect(words(z.object({ password: z.string().min(12, 'use 12 characters or more') }), { password: 'short' })).toBe(
      'The password is too short (12 characters at least).',
    );
    expect(words(z.object({ rate: z.number().lt(1) }), { rate: 1 })).toBe('The rate must be below 1.');
  });

  it("keeps the service's own refusals, which are words already", () => {
    expect(refusalInWords([{ path: 'hostname', message: 'not a valid host name' }])).toBe('Check the host name: not a valid host name.');
    expect(refusalInWords([{ path: '', message: 'the body is not valid JSON', code: 'invalid_json' }])).toBe('Check what you entered: the body is not valid JSON.');
    expect(refusalInWords([])).toBe('Check what you entered.');
  });
});
