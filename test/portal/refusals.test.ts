import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { createConnectionBody } from '../../src/attribution/webhooks/connections';
import { SETTINGS_SCHEMAS } from '../../src/attribution/webhooks/providers';
import { zodDetails } from '../../src/http/errors';
import { refusalInWords } from '../../src/portal/web/refusals';

/** The words the portal shows for the 422 details the API answers when `schema` refuses `value`. */
function words(schema: z.ZodType, value: unknown): string {
  const parsed = schema.safeParse(value);
  if (parsed.success) throw new Error('expected a refusal');
  return refusalInWords(zodDetails(parsed.error));
}

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

  it("keeps the service's own refusals, which are words already", () => {
    expect(refusalInWords([{ path: 'hostname', message: 'not a valid host name' }])).toBe('Check the host name: not a valid host name.');
    expect(refusalInWords([{ path: '', message: 'the body is not valid JSON', code: 'invalid_json' }])).toBe('Check what you entered: the body is not valid JSON.');
    expect(refusalInWords([])).toBe('Check what you entered.');
  });
});
