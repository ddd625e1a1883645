import { ResponseError } from '@backstage/errors';
import { describeError, isNotAllowed } from './errors';

async function responseError(status: number, message: string) {
  return ResponseError.fromResponse(
    new Response(
      JSON.stringify({
        error: { name: 'ConflictError', message },
        response: { statusCode: status },
      }),
      {
        status,
        statusText: 'Conflict',
        headers: { 'Content-Type': 'application/json' },
      },
    ),
  );
}

describe('errors', () => {
  it("uses the backend's message of a ResponseError", async () => {
    const error = await responseError(
      409,
      'StatefulSet shop/db is being pruned by user:default/ann',
    );
    expect(describeError(error)).toBe(
      'StatefulSet shop/db is being pruned by user:default/ann',
    );
  });

  it('recognises a 403', async () => {
    expect(isNotAllowed(await responseError(403, 'no'))).toBe(true);
    expect(isNotAllowed(await responseError(409, 'no'))).toBe(false);
    expect(isNotAllowed(undefined)).toBe(false);
  });
});
