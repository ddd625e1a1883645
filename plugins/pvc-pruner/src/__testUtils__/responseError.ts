import { ResponseError } from '@backstage/errors';

/** The ResponseError the client makes of a backend's error answer. */
export function responseError(
  status: number,
  name: string,
  message: string,
): Promise<ResponseError> {
  return ResponseError.fromResponse(
    new Response(
      JSON.stringify({
        error: { name, message },
        response: { statusCode: status },
      }),
      {
        status,
        statusText: status === 403 ? 'Forbidden' : 'Error',
        headers: { 'Content-Type': 'application/json' },
      },
    ),
  );
}
