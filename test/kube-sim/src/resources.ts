/** Static description of every resource type the simulator serves. */
export interface ResourceType {
  /** '' for the core group. */
  group: string;
  version: string;
  /** Lower-case plural used in URLs, e.g. 'persistentvolumeclaims'. */
  plural: string;
  singular: string;
  kind: string;
  namespaced: boolean;
  shortNames?: string[];
  categories?: string[];
  subresources?: Array<'status' | 'scale'>;
  /** Served read-only and always empty (for clients such as Backstage's Kubernetes backend). */
  listOnly?: boolean;
  /** Computed from other objects at each request (metrics.k8s.io): get and list only, read-only. */
  computed?: boolean;
  /** Served get, list and watch only, from objects the simulator seeds (not always empty, unlike listOnly). */
  readOnly?: boolean;
  /** Served as a CustomResourceDefinition is: its schema drives validation and OpenAPI (see snapshots/schemas.ts). */
  customResource?: boolean;
}

const ALL_VERBS = [
  'create',
  'delete',
  'deletecollection',
  'get',
  'list',
  'patch',
  'update',
  'watch',
];
const LIST_VERBS = ['get', 'list', 'watch'];
const COMPUTED_VERBS = ['get', 'list'];

export const RESOURCE_TYPES: ResourceType[] = [
  {
    group: '',
    version: 'v1',
    plural: 'namespaces',
    singular: 'namespace',
    kind: 'Namespace',
    namespaced: false,
    shortNames: ['ns'],
    subresources: ['status'],
  },
  {
    group: '',
    version: 'v1',
    plural: 'pods',
    singular: 'pod',
    kind: 'Pod',
    namespaced: true,
    shortNames: ['po'],
    categories: ['all'],
    subresources: ['status'],
  },
  {
    group: '',
    version: 'v1',
    plural: 'persistentvolumeclaims',
    singular: 'persistentvolumeclaim',
    kind: 'PersistentVolumeClaim',
    namespaced: true,
    shortNames: ['pvc'],
    subresources: ['status'],
  },
  {
    group: '',
    version: 'v1',
    plural: 'persistentvolumes',
    singular: 'persistentvolume',
    kind: 'PersistentVolume',
    namespaced: false,
    shortNames: ['pv'],
    subresources: ['status'],
  },
  {
    group: '',
    version: 'v1',
    plural: 'events',
    singular: 'event',
    kind: 'Event',
    namespaced: true,
    shortNames: ['ev'],
  },
  {
    group: '',
    version: 'v1',
    plural: 'services',
    singular: 'service',
    kind: 'Service',
    namespaced: true,
    shortNames: ['svc'],
    categories: ['all'],
    listOnly: true,
  },
  {
    group: '',
    version: 'v1',
    plural: 'configmaps',
    singular: 'configmap',
    kind: 'ConfigMap',
    namespaced: true,
    shortNames: ['cm'],
  },
  {
    group: '',
    version: 'v1',
    plural: 'limitranges',
    singular: 'limitrange',
    kind: 'LimitRange',
    namespaced: true,
    shortNames: ['limits'],
    listOnly: true,
  },
  {
    group: '',
    version: 'v1',
    plural: 'resourcequotas',
    singular: 'resourcequota',
    kind: 'ResourceQuota',
    namespaced: true,
    shortNames: ['quota'],
    listOnly: true,
  },
  {
    group: 'apps',
    version: 'v1',
    plural: 'statefulsets',
    singular: 'statefulset',
    kind: 'StatefulSet',
    namespaced: true,
    shortNames: ['sts'],
    categories: ['all'],
    subresources: ['status', 'scale'],
  },
  {
    group: 'apps',
    version: 'v1',
    plural: 'deployments',
    singular: 'deployment',
    kind: 'Deployment',
    namespaced: true,
    shortNames: ['deploy'],
    categories: ['all'],
    listOnly: true,
  },
  {
    group: 'apps',
    version: 'v1',
    plural: 'replicasets',
    singular: 'replicaset',
    kind: 'ReplicaSet',
    namespaced: true,
    shortNames: ['rs'],
    categories: ['all'],
    listOnly: true,
  },
  {
    group: 'apps',
    version: 'v1',
    plural: 'daemonsets',
    singular: 'daemonset',
    kind: 'DaemonSet',
    namespaced: true,
    shortNames: ['ds'],
    categories: ['all'],
    listOnly: true,
  },
  {
    group: 'autoscaling',
    version: 'v2',
    plural: 'horizontalpodautoscalers',
    singular: 'horizontalpodautoscaler',
    kind: 'HorizontalPodAutoscaler',
    namespaced: true,
    shortNames: ['hpa'],
    categories: ['all'],
    subresources: ['status'],
  },
  {
    group: 'batch',
    version: 'v1',
    plural: 'jobs',
    singular: 'job',
    kind: 'Job',
    namespaced: true,
    categories: ['all'],
    listOnly: true,
  },
  {
    group: 'batch',
    version: 'v1',
    plural: 'cronjobs',
    singular: 'cronjob',
    kind: 'CronJob',
    namespaced: true,
    shortNames: ['cj'],
    categories: ['all'],
    listOnly: true,
  },
  {
    group: 'networking.k8s.io',
    version: 'v1',
    plural: 'ingresses',
    singular: 'ingress',
    kind: 'Ingress',
    namespaced: true,
    shortNames: ['ing'],
    listOnly: true,
  },
  {
    group: 'storage.k8s.io',
    version: 'v1',
    plural: 'storageclasses',
    singular: 'storageclass',
    kind: 'StorageClass',
    namespaced: false,
    shortNames: ['sc'],
  },
  {
    group: 'coordination.k8s.io',
    version: 'v1',
    plural: 'leases',
    singular: 'lease',
    kind: 'Lease',
    namespaced: true,
  },
  // The definitions of the custom resources below (snapshots/crds.ts), read-only.
  {
    group: 'apiextensions.k8s.io',
    version: 'v1',
    plural: 'customresourcedefinitions',
    singular: 'customresourcedefinition',
    kind: 'CustomResourceDefinition',
    namespaced: false,
    shortNames: ['crd', 'crds'],
    categories: ['api-extensions'],
    readOnly: true,
  },
  // The CSI snapshot CRDs (kubernetes-csi/external-snapshotter), with their controller (controllers/SnapshotController.ts).
  {
    group: 'snapshot.storage.k8s.io',
    version: 'v1',
    plural: 'volumesnapshots',
    singular: 'volumesnapshot',
    kind: 'VolumeSnapshot',
    namespaced: true,
    shortNames: ['vs'],
    subresources: ['status'],
    customResource: true,
  },
  {
    group: 'snapshot.storage.k8s.io',
    version: 'v1',
    plural: 'volumesnapshotcontents',
    singular: 'volumesnapshotcontent',
    kind: 'VolumeSnapshotContent',
    namespaced: false,
    shortNames: ['vsc', 'vscs'],
    subresources: ['status'],
    customResource: true,
  },
  {
    group: 'snapshot.storage.k8s.io',
    version: 'v1',
    plural: 'volumesnapshotclasses',
    singular: 'volumesnapshotclass',
    kind: 'VolumeSnapshotClass',
    namespaced: false,
    shortNames: ['vsclass', 'vsclasses'],
    customResource: true,
  },
  // What metrics-server serves, asked for by Backstage's Kubernetes tab unless
  // skipMetricsLookup is set, and by kubectl top pod (see http/podMetrics.ts).
  {
    group: 'metrics.k8s.io',
    version: 'v1beta1',
    plural: 'pods',
    singular: '',
    kind: 'PodMetrics',
    namespaced: true,
    listOnly: true,
    computed: true,
  },
];

/** Verbs a resource type answers in discovery. */
export function verbsOf(type: ResourceType): string[] {
  if (type.computed) return COMPUTED_VERBS;
  return type.listOnly || type.readOnly ? LIST_VERBS : ALL_VERBS;
}

export function apiVersionOf(type: ResourceType): string {
  return type.group ? `${type.group}/${type.version}` : type.version;
}

/** Key used for a resource type everywhere inside the simulator, e.g. 'apps/statefulsets' or 'pods'. */
export function resourceKey(type: ResourceType): string {
  return type.group ? `${type.group}/${type.plural}` : type.plural;
}

const byKey = new Map(RESOURCE_TYPES.map(t => [resourceKey(t), t]));
const byKind = new Map(
  RESOURCE_TYPES.map(t => [`${apiVersionOf(t)}/${t.kind}`, t]),
);

export function typeByKey(key: string): ResourceType {
  const type = byKey.get(key);
  if (!type) throw new Error(`unknown resource ${key}`);
  return type;
}

export function findType(group: string, version: string, plural: string) {
  const type = byKey.get(group ? `${group}/${plural}` : plural);
  return type && type.version === version ? type : undefined;
}

export function findTypeByKind(apiVersion: string, kind: string) {
  return byKind.get(`${apiVersion}/${kind}`);
}

/** Group versions served, in discovery order. */
export function groupVersions(): Array<{ group: string; version: string }> {
  const seen = new Map<string, { group: string; version: string }>();
  for (const t of RESOURCE_TYPES) {
    seen.set(apiVersionOf(t), { group: t.group, version: t.version });
  }
  return [...seen.values()];
}
