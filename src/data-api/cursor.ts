import { isStorableText } from '../storable-text';
import { invalidParameter } from '../refusal';
import { SORTS, type Sort } from './params';
import type { PostCursor } from './queries';

/**
 * /posts cursors: the sort, the sort key and the id of the last placement answered,
 * as base64url JSON. Keyset paging on (key, id) visits each placement once, ties
 * included, and a deep page costs what the first does.
 */
export function encodeCursor(sort: Sort, position: PostCursor): string {
  return Buffer.from(JSON.stringify([sort, position.key, position.id])).toString('base64url');
}

const MAX_ENGAGEMENT_KEY = 1_000_000;

/** The position a cursor names; 400 invalid_parameter (cursor) unless it came from /posts with this sort. */
export function decodeCursor(cursor: string, sort: Sort): PostCursor {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    value = undefined;
  }
  if (!Array.isArray(value) || value.length !== 3) throw invalidParameter('cursor', 'not a cursor from this API');
  const [cursorSort, key, id] = value as unknown[];
  const validId = typeof id === 'string' && id.length <= 128 && isStorableText(id); // placement ids are at most 128 characters
  if (!SORTS.includes(cursorSort as Sort) || typeof key !== 'number' || !Number.isFinite(key) || !validId) {
    throw invalidParameter('cursor', 'not a cursor from this API');
  }
  if (cursorSort !== sort) throw invalidParameter('cursor', `the cursor belongs to sort=${cursorSort}`);
  // Keys /posts answers: recent and views integers from 0 (epoch milliseconds, views), engagement at most 10^6.
  const inRange = key >= 0 && (sort === 'engagement' ? key <= MAX_ENGAGEMENT_KEY : Number.isInteger(key) && key <= 2 ** 53);
  if (!inRange) throw invalidParameter('cursor', 'not a cursor from this API');
  return { key, id };
}
