import { InputError } from '@backstage/errors';

/** An opaque page cursor: the fields that say where the next page starts, as base64url JSON. */
export function encodePageCursor(fields: Record<string, string>): string {
  return Buffer.from(JSON.stringify({ v: 1, ...fields }), 'utf8').toString(
    'base64url',
  );
}

/** What a cursor this backend did not write is answered with. */
export const invalidCursor = () =>
  new InputError(
    'Invalid cursor: pass the nextCursor of the previous page unchanged',
  );

/**
 * The fields of a cursor {@link encodePageCursor} wrote; an InputError for
 * anything else, or a cursor without one of `keys`.
 */
export function decodePageCursor<K extends string>(
  cursor: string,
  keys: readonly K[],
): Record<K, string> {
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw invalidCursor();
  let parsed: Record<string, unknown> | null;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalidCursor();
  }
  if (typeof parsed !== 'object' || parsed === null || parsed.v !== 1) {
    throw invalidCursor();
  }
  for (const key of keys) {
    const value = parsed[key];
    if (typeof value !== 'string' || !value) throw invalidCursor();
  }
  return parsed as Record<K, string>;
}
