/**
 * A 422 invalid_request in words: the API's `details` are zod's (path, code and its English
 * message); a brand reads a sentence per field. Numbers and choices are taken from zod's message.
 */
export type Detail = { path?: string; message?: string; code?: string };

/** Fields as a brand reads them; settings keep their keys, which their form labels show. */
const FIELD_NAMES: Record<string, string> = {
  hostname: 'host name',
  signing_secret: 'signing secret',
};

export function refusalInWords(details: Detail[]): string {
  return details.length ? details.map(sentence).join(' ') : 'Check what you entered.';
}

function sentence({ path = '', message = '', code }: Detail): string {
  const [first = '', ...rest] = path.split('.');
  const field = FIELD_NAMES[first] ?? first;
  const name = !field ? 'what you entered' : rest.length ? `the ${field}'s "${rest.join('.')}"` : `the ${field}`;
  const Name = name.charAt(0).toUpperCase() + name.slice(1);
  const limit = /[<>]=?\s*(-?\d+)/.exec(message)?.[1];
  const text = /expected string/.test(message);
  switch (code) {
    case 'too_big':
      return text ? `${Name} is too long${limit ? ` (${limit} characters at most)` : ''}.` : `${Name} is too large${limit ? ` (${limit} at most)` : ''}.`;
    case 'too_small':
      if (text) return limit === '1' ? `Fill in ${name}.` : `${Name} is too short${limit ? ` (${limit} characters at least)` : ''}.`;
      return message.includes('>0') ? `${Name} must be above 0.` : `${Name} is too small${limit ? ` (${limit} at least)` : ''}.`;
    case 'invalid_type':
      return message.endsWith('received undefined') ? `Fill in ${name}.` : `${Name} must be ${expectedType(message)}.`;
    case 'invalid_value': {
      const options = [...message.matchAll(/"([^"]*)"/g)].map((m) => m[1]);
      return options.length ? `${Name} must be one of: ${options.join(', ')}.` : `${Name} is not one of the values it takes.`;
    }
    case 'invalid_format':
      // Formats name themselves in their message (e.g. "the shop domain, <shop>.myshopify.com").
      return `${Name} is not in the right form${message && !message.startsWith('Invalid') ? ` (${message})` : ''}.`;
    case 'invalid_key':
      return `A name in ${name} is not valid.`;
    case 'unrecognized_keys':
      return `The service does not take ${[...message.matchAll(/"([^"]*)"/g)].map((m) => m[1]).join(', ') || 'some of what you entered'}.`;
    default:
      // The service's own refusals (no zod code) are short phrases, e.g. "not a valid host name".
      return `Check ${name}${message ? `: ${message}` : ''}.`;
  }
}

/** What zod expected ("expected int, received number"), in words. */
function expectedType(message: string): string {
  const expected = /expected (\w+)/.exec(message)?.[1];
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
