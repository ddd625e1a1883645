import { ServiceUnavailableError } from '@backstage/errors';
import { ClusterRequestError } from './KubeGateway';

/**
 * A cluster's failure as the HTTP answer it deserves: 503 naming the cluster
 * (and, when it refused, the verb, resource and status). Other errors pass.
 * The message never carries a credential, and the cause is dropped so the
 * response cannot either.
 */
export function clusterFailure(error: unknown): unknown {
  return error instanceof ClusterRequestError
    ? new ServiceUnavailableError(error.message)
    : error;
}

/**
 * Why a write with preconditions was refused because its object changed
 * since it was checked (409) or is gone (404): the cluster's reason, or its
 * status; undefined for any other error.
 */
export function changedSinceChecked(error: unknown): string | undefined {
  return error instanceof ClusterRequestError &&
    (error.statusCode === 409 || error.statusCode === 404)
    ? String(error.reason ?? error.statusCode)
    : undefined;
}
