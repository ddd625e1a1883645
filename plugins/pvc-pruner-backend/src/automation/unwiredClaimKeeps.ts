import { ServiceUnavailableError } from '@backstage/errors';
import type { ClaimKeeps } from './types';

const unwired = async (): Promise<never> => {
  throw new ServiceUnavailableError(
    'claim keeps cannot be read here, so no automatic prune may delete anything',
  );
};

/**
 * Merge glue until the card keeps' store (ClaimKeepStore) is wired in
 * plugin.ts: every read fails, so an automatic job fails before its first
 * delete rather than delete a claim whose keep it cannot read.
 */
export const unwiredClaimKeeps: ClaimKeeps = {
  keepsOf: unwired,
  markDeleting: unwired,
  keptNow: unwired,
  unmarkDeleting: unwired,
};
