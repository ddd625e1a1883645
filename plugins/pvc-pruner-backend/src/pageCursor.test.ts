import { decodePageCursor, encodePageCursor } from './pageCursor';

const asCursor = (value: unknown) =>
  Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');

describe('page cursors', () => {
  it('gives back the fields it was made from', () => {
    const cursor = encodePageCursor({ after: 'component:default/orders' });
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodePageCursor(cursor, ['after'])).toMatchObject({
      after: 'component:default/orders',
    });
  });

  it.each([
    ['not base64url', 'not a cursor!'],
    ['not JSON', Buffer.from('{v:1', 'utf8').toString('base64url')],
    ['JSON null', asCursor(null)],
    ['another version', asCursor({ v: 2, after: 'x' })],
    ['a missing field', asCursor({ v: 1 })],
    ['an empty field', asCursor({ v: 1, after: '' })],
    ['a field that is not a string', asCursor({ v: 1, after: 7 })],
  ])('refuses a cursor with %s, saying what to pass', (_, cursor) => {
    expect(() => decodePageCursor(cursor, ['after'])).toThrow(
      expect.objectContaining({
        name: 'InputError',
        message:
          'Invalid cursor: pass the nextCursor of the previous page unchanged',
      }),
    );
  });
});
