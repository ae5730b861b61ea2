/**
 * A 422 invalid_request in words: the API's `details` are zod's issues (path, code, English
 * message and zod's own fields, src/http/errors.ts zodDetails); a brand reads a sentence per field.
 * Numbers and choices come from those fields, never from the message.
 */
export type Detail = {
  path?: string;
  message?: string;
  code?: string;
  expected?: string;
  /** What was measured: "string" (in characters), "number", "int", "array", ... */
  origin?: string;
  minimum?: number | string;
  maximum?: number | string;
  inclusive?: boolean;
  exact?: boolean;
  values?: unknown[];
  keys?: string[];
  format?: string;
  /** invalid_type: no value was sent. */
  missing?: boolean;
};

/** Fields as a brand reads them; settings keep their keys, which their form labels show. */
const FIELD_NAMES: Record<string, string> = {
  hostname: 'host name',
  signing_secret: 'signing secret',
  ios: 'iOS app',
  android: 'Android app',
};

export function refusalInWords(details: Detail[]): string {
  return details.length ? details.map(sentence).join(' ') : 'Check what you entered.';
}

function sentence(detail: Detail): string {
  const { path = '', message = '', code } = detail;
  const [first = '', ...rest] = path.split('.');
  const field = FIELD_NAMES[first] ?? first;
  const name = !field ? 'what you entered' : rest.length ? `the ${field}'s "${rest.join('.')}"` : `the ${field}`;
  const Name = name.charAt(0).toUpperCase() + name.slice(1);
  const text = detail.origin === 'string';
  switch (code) {
    case 'too_big': {
      const limit = bound(detail, detail.maximum);
      if (text) return `${Name} is too long${limit ? ` (${limit} characters at most)` : ''}.`;
      return limit && detail.inclusive === false ? `${Name} must be below ${limit}.` : `${Name} is too large${limit ? ` (${limit} at most)` : ''}.`;
    }
    case 'too_small': {
      const limit = bound(detail, detail.minimum);
      if (text) return limit === '1' ? `Fill in ${name}.` : `${Name} is too short${limit ? ` (${limit} characters at least)` : ''}.`;
      return limit && detail.inclusive === false ? `${Name} must be above ${limit}.` : `${Name} is too small${limit ? ` (${limit} at least)` : ''}.`;
    }
    case 'invalid_type':
      return detail.missing ? `Fill in ${name}.` : `${Name} must be ${expectedType(detail.expected)}.`;
    case 'invalid_value':
      return detail.values?.length ? `${Name} must be one of: ${detail.values.map(String).join(', ')}.` : `${Name} is not one of the values it takes.`;
    case 'invalid_format':
      // Formats name themselves in their message (e.g. "the shop domain, <shop>.myshopify.com").
      return `${Name} is not in the right form${message && !message.startsWith('Invalid') ? ` (${message})` : ''}.`;
    case 'invalid_key':
      return `A name in ${name} is not valid.`;
    case 'unrecognized_keys':
      return `The service does not take ${detail.keys?.join(', ') || 'some of what you entered'}.`;
    default:
      // The service's own refusals (no zod code) are short phrases, e.g. "not a valid host name".
      return `Check ${name}${message ? `: ${message}` : ''}.`;
  }
}

/** A minimum or maximum as written; none for an exact length, which "at most"/"at least" would misstate. */
function bound({ exact }: Detail, limit: unknown): string | undefined {
  return !exact && (typeof limit === 'number' || typeof limit === 'string') ? String(limit) : undefined;
}

/** What zod expected (its `expected`, e.g. "int"), in words. */
function expectedType(expected: string | undefined): string {
  switch (expected) {
    case 'int':
      return 'a whole number';
    case 'number':
      return 'a number';
    case 'boolean':
      return 'true or false';
    case 'string':
      return 'text';
    case 'record':
    case 'object':
      return 'a JSON object';
    default:
      return 'of another kind';
  }
}
