import { ResponseError } from '@backstage/errors';

/** The backend's own words for a failed request, else the error's message. */
export function describeError(error: Error): string {
  if (error instanceof ResponseError || error.name === 'ResponseError') {
    const response = error as ResponseError;
    const cause = response.cause?.message ?? response.body?.error?.message;
    if (cause) return cause;
  }
  return error.message;
}

/** True when the backend said the user may not do this (403). */
export function isNotAllowed(error: Error | undefined): boolean {
  if (!error) return false;
  if (error.name === 'NotAllowedError') return true;
  return (error as Partial<ResponseError>).statusCode === 403;
}

/** True when the backend said too many prunes or streams run at once (429): wait, then try again. */
export function isTooManyRequests(error: Error | undefined): boolean {
  if (!error) return false;
  return (error as Partial<ResponseError>).statusCode === 429;
}
