import { ClusterRequestError, KubeGateway } from '../kubernetes';
import { hpaAsTheRuleReadsIt, KnownAutoscalers } from './autoscalerReach';

/**
 * The namespace's HorizontalPodAutoscalers, trimmed, read live. A cluster
 * that refuses them (403: an RBAC binding from before pvc-pruner read them)
 * or does not serve autoscaling/v2 (404) gives why instead, so the orphan
 * rule keeps every claim an autoscaler could bring back rather than offer
 * it. Any other failure fails the scan, as a failed claim list does.
 */
export async function readAutoscalers(
  gateway: KubeGateway,
  namespace: string,
): Promise<KnownAutoscalers> {
  try {
    return (await gateway.listAutoscalers(namespace, hpaAsTheRuleReadsIt))
      .items;
  } catch (e) {
    if (
      e instanceof ClusterRequestError &&
      (e.statusCode === 403 || e.statusCode === 404)
    )
      return { unreadable: e.message };
    throw e;
  }
}
