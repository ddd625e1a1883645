import { InputError } from '@backstage/errors';

/** An opaque cursor: the last entity ref of the page before. */
export function encodeFleetCursor(lastEntityRef: string): string {
  return Buffer.from(
    JSON.stringify({ v: 1, after: lastEntityRef }),
    'utf8',
  ).toString('base64url');
}

/** The entity ref a cursor continues after; InputError for anything this backend did not write. */
export function decodeFleetCursor(cursor: string): string {
  const invalid = () =>
    new InputError(
      'Invalid cursor: pass the nextCursor of the previous page unchanged',
    );
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw invalid();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  const after = (parsed as { v?: unknown; after?: unknown } | null)?.after;
  if (
    (parsed as { v?: unknown })?.v !== 1 ||
    typeof after !== 'string' ||
    !after
  )
    throw invalid();
  return after;
}
