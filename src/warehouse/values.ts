/** Value formats ClickHouse's JSONEachRow input reads without best-effort parsing. */

/** The last date formatted: under load many rows share a millisecond. */
const lastDateTime = { ms: Number.NaN, text: '' };

/** A JS date as DateTime64(3, 'UTC') text: `YYYY-MM-DD hh:mm:ss.mmm`. */
export function chDateTime(d: Date): string {
  const ms = d.getTime();
  if (ms !== lastDateTime.ms) {
    lastDateTime.text = d.toISOString().replace('T', ' ').replace('Z', '');
    lastDateTime.ms = ms;
  }
  return lastDateTime.text;
}

let lastVersion = 0n;

/**
 * A strictly increasing row version for ReplacingMergeTree (microseconds since the epoch,
 * bumped on ties), sent as a string because it exceeds 2^53.
 */
export function nextVersion(): string {
  let v = BigInt(Date.now()) * 1000n;
  if (v <= lastVersion) v = lastVersion + 1n;
  lastVersion = v;
  return v.toString();
}
