/**
 * The protobuf messages kube-sim decodes, as tables of field number → JSON
 * field. Numbers are those of the upstream generated.proto files
 * (k8s.io/api core/v1 and apps/v1, k8s.io/apimachinery meta/v1). Only the
 * fields the simulator and kubectl's imperative commands use are listed;
 * any other field is skipped, as a decoder skips fields it does not know.
 *
 * Go's protobuf marshaller writes every non-pointer field, zero or not, so a
 * zero value is dropped (as JSON's omitempty would), except for `keep`
 * fields: pointers in Go, where an explicit zero or empty message means
 * something (`storageClassName: ""`, `emptyDir: {}`, `replicas: 0`).
 */
export type Scalar =
  | 'string'
  | 'bool'
  | 'int'
  | 'bytes'
  | 'time'
  | 'quantity'
  | 'intOrString';

export interface FieldSpec {
  json: string;
  /** A scalar, or the name of a message in MESSAGES. */
  type: Scalar | string;
  repeated?: boolean;
  /** map<string, type>. */
  map?: boolean;
  keep?: boolean;
  /** The message's fields are merged into the parent, as Go's embedded structs in JSON. */
  inline?: boolean;
}

type Options = Partial<Omit<FieldSpec, 'json' | 'type'>>;

const field =
  (type: FieldSpec['type']) =>
  (json: string, options: Options = {}): FieldSpec => ({
    json,
    type,
    ...options,
  });
const str = field('string');
const bool = field('bool');
const int = field('int');
const time = field('time');
const strings = (json: string) => str(json, { repeated: true });
const stringMap = (json: string) => str(json, { map: true });
const message = (json: string, type: string, options: Options = {}) =>
  field(type)(json, options);
const list = (json: string, type: string) =>
  message(json, type, { repeated: true });
const pointer = (json: string, type: string) =>
  message(json, type, { keep: true });
const inline = (type: string) => message('', type, { inline: true });

export const MESSAGES: Record<string, Record<number, FieldSpec>> = {
  // k8s.io/apimachinery/pkg/apis/meta/v1
  ObjectMeta: {
    1: str('name'),
    2: str('generateName'),
    3: str('namespace'),
    5: str('uid'),
    6: str('resourceVersion'),
    7: int('generation'),
    8: time('creationTimestamp'),
    9: time('deletionTimestamp', { keep: true }),
    10: int('deletionGracePeriodSeconds', { keep: true }),
    11: stringMap('labels'),
    12: stringMap('annotations'),
    13: list('ownerReferences', 'OwnerReference'),
    14: strings('finalizers'),
  },
  OwnerReference: {
    5: str('apiVersion'),
    1: str('kind'),
    3: str('name'),
    4: str('uid'),
    6: bool('controller', { keep: true }),
    7: bool('blockOwnerDeletion', { keep: true }),
  },
  LabelSelector: {
    1: stringMap('matchLabels'),
    2: list('matchExpressions', 'LabelSelectorRequirement'),
  },
  LabelSelectorRequirement: {
    1: str('key'),
    2: str('operator'),
    3: strings('values'),
  },
  DeleteOptions: {
    1: int('gracePeriodSeconds', { keep: true }),
    2: pointer('preconditions', 'Preconditions'),
    3: bool('orphanDependents', { keep: true }),
    4: str('propagationPolicy', { keep: true }),
    5: strings('dryRun'),
  },
  Preconditions: {
    1: str('uid', { keep: true }),
    2: str('resourceVersion', { keep: true }),
  },

  // k8s.io/api/core/v1
  Namespace: {
    1: message('metadata', 'ObjectMeta'),
    2: message('spec', 'NamespaceSpec'),
  },
  NamespaceSpec: { 1: strings('finalizers') },
  ConfigMap: {
    1: message('metadata', 'ObjectMeta'),
    2: stringMap('data'),
    3: field('bytes')('binaryData', { map: true }),
    4: bool('immutable', { keep: true }),
  },
  PersistentVolumeClaim: {
    1: message('metadata', 'ObjectMeta'),
    2: message('spec', 'PersistentVolumeClaimSpec'),
  },
  PersistentVolumeClaimSpec: {
    1: strings('accessModes'),
    4: pointer('selector', 'LabelSelector'),
    2: message('resources', 'ResourceRequirements'),
    3: str('volumeName'),
    5: str('storageClassName', { keep: true }),
    6: str('volumeMode', { keep: true }),
    7: pointer('dataSource', 'TypedLocalObjectReference'),
  },
  TypedLocalObjectReference: {
    1: str('apiGroup', { keep: true }),
    2: str('kind'),
    3: str('name'),
  },
  Pod: {
    1: message('metadata', 'ObjectMeta'),
    2: message('spec', 'PodSpec'),
  },
  PodTemplateSpec: {
    1: message('metadata', 'ObjectMeta'),
    2: message('spec', 'PodSpec'),
  },
  PodSpec: {
    1: list('volumes', 'Volume'),
    20: list('initContainers', 'Container'),
    2: list('containers', 'Container'),
    3: str('restartPolicy'),
    4: int('terminationGracePeriodSeconds', { keep: true }),
    5: int('activeDeadlineSeconds', { keep: true }),
    6: str('dnsPolicy'),
    7: stringMap('nodeSelector'),
    8: str('serviceAccountName'),
    9: str('serviceAccount'),
    21: bool('automountServiceAccountToken', { keep: true }),
    10: str('nodeName'),
    11: bool('hostNetwork'),
    12: bool('hostPID'),
    13: bool('hostIPC'),
    27: bool('shareProcessNamespace', { keep: true }),
    15: list('imagePullSecrets', 'LocalObjectReference'),
    16: str('hostname'),
    17: str('subdomain'),
    19: str('schedulerName'),
    24: str('priorityClassName'),
    25: int('priority', { keep: true }),
    29: str('runtimeClassName', { keep: true }),
    30: bool('enableServiceLinks', { keep: true }),
    31: str('preemptionPolicy', { keep: true }),
  },
  LocalObjectReference: { 1: str('name') },
  Volume: {
    1: str('name'),
    2: inline('VolumeSource'),
  },
  VolumeSource: {
    2: pointer('emptyDir', 'EmptyDirVolumeSource'),
    6: pointer('secret', 'SecretVolumeSource'),
    10: pointer('persistentVolumeClaim', 'PersistentVolumeClaimVolumeSource'),
    19: pointer('configMap', 'ConfigMapVolumeSource'),
  },
  EmptyDirVolumeSource: {
    1: str('medium'),
    2: field('quantity')('sizeLimit', { keep: true }),
  },
  SecretVolumeSource: {
    1: str('secretName'),
    3: int('defaultMode', { keep: true }),
    4: bool('optional', { keep: true }),
  },
  ConfigMapVolumeSource: {
    1: inline('LocalObjectReference'),
    3: int('defaultMode', { keep: true }),
    4: bool('optional', { keep: true }),
  },
  PersistentVolumeClaimVolumeSource: {
    1: str('claimName'),
    2: bool('readOnly'),
  },
  Container: {
    1: str('name'),
    2: str('image'),
    3: strings('command'),
    4: strings('args'),
    5: str('workingDir'),
    6: list('ports', 'ContainerPort'),
    19: list('envFrom', 'EnvFromSource'),
    7: list('env', 'EnvVar'),
    8: message('resources', 'ResourceRequirements'),
    9: list('volumeMounts', 'VolumeMount'),
    13: str('terminationMessagePath'),
    20: str('terminationMessagePolicy'),
    14: str('imagePullPolicy'),
    15: pointer('securityContext', 'SecurityContext'),
    16: bool('stdin'),
    17: bool('stdinOnce'),
    18: bool('tty'),
  },
  ContainerPort: {
    1: str('name'),
    2: int('hostPort'),
    3: int('containerPort'),
    4: str('protocol'),
    5: str('hostIP'),
  },
  EnvVar: {
    1: str('name'),
    2: str('value'),
    3: pointer('valueFrom', 'EnvVarSource'),
  },
  EnvVarSource: {
    1: pointer('fieldRef', 'ObjectFieldSelector'),
    3: pointer('configMapKeyRef', 'KeySelector'),
    4: pointer('secretKeyRef', 'KeySelector'),
  },
  ObjectFieldSelector: {
    1: str('apiVersion'),
    2: str('fieldPath'),
  },
  /** ConfigMapKeySelector and SecretKeySelector share their field numbers. */
  KeySelector: {
    1: inline('LocalObjectReference'),
    2: str('key'),
    3: bool('optional', { keep: true }),
  },
  EnvFromSource: {
    1: str('prefix'),
    2: pointer('configMapRef', 'EnvSource'),
    3: pointer('secretRef', 'EnvSource'),
  },
  /** ConfigMapEnvSource and SecretEnvSource share their field numbers. */
  EnvSource: {
    1: inline('LocalObjectReference'),
    2: bool('optional', { keep: true }),
  },
  ResourceRequirements: {
    1: field('quantity')('limits', { map: true }),
    2: field('quantity')('requests', { map: true }),
  },
  VolumeMount: {
    1: str('name'),
    2: bool('readOnly'),
    3: str('mountPath'),
    4: str('subPath'),
    5: str('mountPropagation', { keep: true }),
    6: str('subPathExpr'),
  },
  SecurityContext: {
    1: pointer('capabilities', 'Capabilities'),
    2: bool('privileged', { keep: true }),
    4: int('runAsUser', { keep: true }),
    8: int('runAsGroup', { keep: true }),
    5: bool('runAsNonRoot', { keep: true }),
    6: bool('readOnlyRootFilesystem', { keep: true }),
    7: bool('allowPrivilegeEscalation', { keep: true }),
  },
  Capabilities: {
    1: strings('add'),
    2: strings('drop'),
  },

  // k8s.io/api/apps/v1
  Deployment: {
    1: message('metadata', 'ObjectMeta'),
    2: message('spec', 'DeploymentSpec'),
  },
  DeploymentSpec: {
    1: int('replicas', { keep: true }),
    2: pointer('selector', 'LabelSelector'),
    3: message('template', 'PodTemplateSpec'),
    4: message('strategy', 'DeploymentStrategy'),
    5: int('minReadySeconds'),
    6: int('revisionHistoryLimit', { keep: true }),
    7: bool('paused'),
    9: int('progressDeadlineSeconds', { keep: true }),
  },
  DeploymentStrategy: {
    1: str('type'),
    2: pointer('rollingUpdate', 'RollingUpdateDeployment'),
  },
  RollingUpdateDeployment: {
    1: field('intOrString')('maxUnavailable', { keep: true }),
    2: field('intOrString')('maxSurge', { keep: true }),
  },
};

const TOP_LEVEL: Record<string, string> = {
  'v1/Namespace': 'Namespace',
  'v1/Pod': 'Pod',
  'v1/ConfigMap': 'ConfigMap',
  'v1/PersistentVolumeClaim': 'PersistentVolumeClaim',
  'apps/v1/Deployment': 'Deployment',
};

/** apiVersion/kind → top-level message; DeleteOptions is sent in any group version. */
export function messageForKind(
  apiVersion: string,
  kind: string,
): string | undefined {
  if (kind === 'DeleteOptions') return kind;
  return TOP_LEVEL[`${apiVersion}/${kind}`];
}

/** The kinds with a decoder, for error messages. */
export const DECODED_KINDS = Object.keys(TOP_LEVEL).map(k =>
  k.slice(k.lastIndexOf('/') + 1),
);
