/** The resources pvc-pruner reads, watches or deletes by path, with where each lives in the API. */
const RESOURCES = {
  statefulsets: { prefix: '/apis/apps/v1', namespaced: true },
  persistentvolumeclaims: { prefix: '/api/v1', namespaced: true },
  pods: { prefix: '/api/v1', namespaced: true },
  persistentvolumes: { prefix: '/api/v1', namespaced: false },
  namespaces: { prefix: '/api/v1', namespaced: false },
  horizontalpodautoscalers: {
    prefix: '/apis/autoscaling/v2',
    namespaced: true,
  },
  storageclasses: { prefix: '/apis/storage.k8s.io/v1', namespaced: false },
  volumesnapshots: {
    prefix: '/apis/snapshot.storage.k8s.io/v1',
    namespaced: true,
  },
  volumesnapshotcontents: {
    prefix: '/apis/snapshot.storage.k8s.io/v1',
    namespaced: false,
  },
  volumesnapshotclasses: {
    prefix: '/apis/snapshot.storage.k8s.io/v1',
    namespaced: false,
  },
} as const;

export type KubeResource = keyof typeof RESOURCES;

/**
 * The API path of a collection (no name) or an object, every segment
 * URI-encoded, so a name from a request can never address another path.
 * A namespaced resource without a namespace is the all-namespaces collection.
 */
export function apiPath(
  resource: KubeResource,
  target: { namespace?: string; name?: string } = {},
): string {
  const { prefix, namespaced } = RESOURCES[resource];
  if (!namespaced && target.namespace !== undefined)
    throw new Error(`${resource} are not namespaced`);
  const segments = [
    ...(target.namespace !== undefined ? ['namespaces', target.namespace] : []),
    resource,
    ...(target.name !== undefined ? [target.name] : []),
  ];
  return `${prefix}/${segments.map(encodeURIComponent).join('/')}`;
}
