import { errors } from '../errors';
import { labelMatcher } from '../selectors';
import { ObjectStore } from '../store';
import { KubeObject, ObjectMeta } from '../types';
import type { HandlerResult, ResourceRequest } from './resourceHandler';

const API_VERSION = 'metrics.k8s.io/v1beta1';

/**
 * metrics-server's PodMetrics of a running pod. No container runs in the
 * simulator, so each container's usage is zero; the pod's labels are copied,
 * as metrics-server does, so label selectors work.
 */
function podMetricsOf(pod: KubeObject, now: string): KubeObject {
  return {
    kind: 'PodMetrics',
    apiVersion: API_VERSION,
    // Like metrics-server's, with no uid and no resourceVersion: it stores nothing.
    metadata: {
      name: pod.metadata.name,
      namespace: pod.metadata.namespace,
      creationTimestamp: now,
      ...(pod.metadata.labels ? { labels: pod.metadata.labels } : {}),
    } as ObjectMeta,
    timestamp: now,
    window: '30s',
    containers: (pod.spec?.containers ?? []).map((c: { name: string }) => ({
      name: c.name,
      usage: { cpu: '0', memory: '0' },
    })),
  };
}

const running = (pod: KubeObject) => pod.status?.phase === 'Running';

/** get and list of metrics.k8s.io/v1beta1 pods, computed from the pods as metrics-server reports them. */
export function handlePodMetrics(
  store: ObjectStore,
  req: ResourceRequest,
): HandlerResult {
  const { route, query } = req;
  const now = new Date().toISOString();
  if (req.verb === 'get') {
    const pod = store.get('pods', route.namespace, route.name!);
    if (!pod || !running(pod))
      throw errors.notFound({
        group: 'metrics.k8s.io',
        kind: 'podmetrics',
        name: route.name,
      });
    return { status: 200, body: podMetricsOf(pod, now) };
  }
  if (req.verb !== 'list') throw errors.methodNotAllowed(req.verb);
  const labels = labelMatcher(query.get('labelSelector') ?? undefined);
  const items = store
    .list('pods', { namespace: route.namespace })
    .items.filter(pod => running(pod) && labels(pod.metadata.labels))
    .map(pod => podMetricsOf(pod, now));
  return {
    status: 200,
    items,
    body: {
      kind: 'PodMetricsList',
      apiVersion: API_VERSION,
      metadata: {},
      items,
    },
  };
}
