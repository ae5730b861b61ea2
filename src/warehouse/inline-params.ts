/**
 * Writes each `{name:Type}` placeholder of a statement as `CAST('<value as text>' AS Type)`: what a
 * ClickHouse server does with a bound parameter (it parses the text as Type). Embedded reads use it
 * because chDB runs bound statements one at a time in the whole process (docs/reads.md, "Concurrent
 * reads"). The text is a single-quoted literal with `\` and `'` escaped and control characters
 * written as \xHH, so no value can end the literal; the type is the statement's own fixed text.
 */

const PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_]*):([^{}]+)\}/g;

export function inlineParams(query: string, params: Record<string, unknown> | undefined): string {
  return query.replace(PLACEHOLDER, (_, name: string, type: string) => {
    if (!params || !Object.hasOwn(params, name) || params[name] === undefined) {
      throw new Error(`query parameter ${name} is not set`);
    }
    return `CAST(${literal(params[name], name)} AS ${type})`;
  });
}

/** A value as ClickHouse literal text: arrays element by element, everything else as quoted text. */
function literal(value: unknown, name: string): string {
  if (value === null) return 'NULL';
  if (Array.isArray(value)) return `[${value.map((v) => literal(v, name)).join(', ')}]`;
  // A time as UTC text with milliseconds, which DateTime and DateTime64 parse alike.
  if (value instanceof Date) return quote(value.toISOString().replace('T', ' ').replace('Z', ''));
  switch (typeof value) {
    case 'string':
      return quote(value);
    case 'bigint':
      return quote(value.toString());
    case 'number':
      if (!Number.isFinite(value)) throw new Error(`query parameter ${name} is not a finite number`);
      return quote(String(value));
    case 'boolean':
      return quote(value ? '1' : '0');
    default:
      throw new Error(`query parameter ${name} has an unsupported type (${typeof value})`);
  }
}

/** A single-quoted ClickHouse string literal of any text. */
export function quote(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it escapes
  const escaped = text.replace(/[\\'\u0000-\u001f\u007f]/g, (ch) =>
    ch === '\\' || ch === "'" ? `\\${ch}` : `\\x${ch.charCodeAt(0).toString(16).padStart(2, '0')}`,
  );
  return `'${escaped}'`;
}
