import { CustomErrorBase } from '@backstage/errors';

/**
 * Too many of something run at once: a 429. `@backstage/errors` has no such
 * class, and Backstage's error middleware answers with an error's numeric
 * `statusCode`, so this one carries it.
 */
export class TooManyRequestsError extends CustomErrorBase {
  name = 'TooManyRequestsError' as const;
  readonly statusCode = 429;
}
