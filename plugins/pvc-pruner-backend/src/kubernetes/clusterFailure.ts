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
