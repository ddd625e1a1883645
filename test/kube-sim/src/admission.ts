import { errors } from './errors';
import { labelSelectorMatcher } from './selectors';
import { ResourceType } from './resources';
import { KubeObject } from './types';
import { SNAPSHOT_SCHEMAS, snapshotRules } from './snapshots/schemas';
import { prune, validateAgainstSchema } from './snapshots/structuralSchema';

export const PVC_PROTECTION = 'kubernetes.io/pvc-protection';
export const PV_PROTECTION = 'kubernetes.io/pv-protection';
/** Finalizers the StorageObjectInUseProtection admission plugin adds on create. */
const PROTECTION_FINALIZERS: Record<string, string | undefined> = {
  PersistentVolumeClaim: PVC_PROTECTION,
  PersistentVolume: PV_PROTECTION,
};

export const DEFAULT_CLASS_ANNOTATION =
  'storageclass.kubernetes.io/is-default-class';

const DNS_SUBDOMAIN =
  /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const LABEL_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
/** A key of a ConfigMap's data or binaryData (validation.IsConfigMapKey). */
const CONFIG_KEY = /^[-._a-zA-Z0-9]+$/;
const QUANTITY =
  /^[+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+|Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E)?$/;

type Cause = { field: string; message: string; reason?: string };

/** Kinds whose names must be DNS-1123 labels rather than subdomains. */
const LABEL_NAMED = new Set(['Namespace', 'Service']);

function validateName(type: ResourceType, name: unknown, causes: Cause[]) {
  if (typeof name !== 'string' || name === '') {
    causes.push({
      field: 'metadata.name',
      message: 'Required value: name or generateName is required',
      reason: 'FieldValueRequired',
    });
    return;
  }
  const label = LABEL_NAMED.has(type.kind);
  const pattern = label ? DNS_LABEL : DNS_SUBDOMAIN;
  const max = label ? 63 : 253;
  if (name.length > max || !pattern.test(name)) {
    causes.push({
      field: 'metadata.name',
      message: `Invalid value: "${name}": a lowercase RFC 1123 ${
        label ? 'label' : 'subdomain'
      } must consist of lower case alphanumeric characters, '-'${
        label ? '' : " or '.'"
      }, and must start and end with an alphanumeric character (at most ${max} characters)`,
    });
  }
}

function validateLabels(labels: unknown, field: string, causes: Cause[]) {
  if (labels === undefined) return;
  if (typeof labels !== 'object' || labels === null || Array.isArray(labels)) {
    causes.push({ field, message: 'Invalid value: must be a map of strings' });
    return;
  }
  for (const [key, value] of Object.entries(labels)) {
    const [prefix, name] = key.includes('/')
      ? key.split(/\/(.*)/s)
      : [undefined, key];
    if (
      (prefix !== undefined && !DNS_SUBDOMAIN.test(prefix)) ||
      !LABEL_NAME.test(name) ||
      name.length > 63
    ) {
      causes.push({
        field: `${field}`,
        message: `Invalid value: "${key}": name part must consist of alphanumeric characters, '-', '_' or '.'`,
      });
    }
    if (
      typeof value !== 'string' ||
      !LABEL_VALUE.test(value) ||
      value.length > 63
    ) {
      causes.push({
        field: `${field}`,
        message: `Invalid value: "${String(
          value,
        )}": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.'`,
      });
    }
  }
}

export function isQuantity(value: unknown): boolean {
  return (
    (typeof value === 'string' && QUANTITY.test(value)) ||
    (typeof value === 'number' && value >= 0)
  );
}

function validatePvcSpec(spec: any, path: string, causes: Cause[]) {
  if (!spec || typeof spec !== 'object') {
    causes.push({
      field: path,
      message: 'Required value',
      reason: 'FieldValueRequired',
    });
    return;
  }
  if (!Array.isArray(spec.accessModes) || spec.accessModes.length === 0) {
    causes.push({
      field: `${path}.accessModes`,
      message: 'Required value: at least 1 access mode is required',
      reason: 'FieldValueRequired',
    });
  }
  const storage = spec.resources?.requests?.storage;
  if (storage === undefined) {
    causes.push({
      field: `${path}.resources[storage]`,
      message: 'Required value',
      reason: 'FieldValueRequired',
    });
  } else if (!isQuantity(storage)) {
    causes.push({
      field: `${path}.resources.requests[storage]`,
      message: `Invalid value: "${storage}": must be a quantity`,
    });
  }
}

function validateConfigMap(
  obj: KubeObject,
  old: KubeObject | undefined,
  causes: Cause[],
) {
  if (old?.immutable === true) {
    for (const field of ['immutable', 'data', 'binaryData']) {
      if (JSON.stringify(obj[field]) !== JSON.stringify(old[field])) {
        causes.push({
          field,
          message: 'Forbidden: field is immutable when `immutable` is set',
          reason: 'FieldValueForbidden',
        });
      }
    }
  }
  const seen = new Set<string>();
  for (const field of ['data', 'binaryData']) {
    for (const key of Object.keys(obj[field] ?? {})) {
      if (
        key.length > 253 ||
        !CONFIG_KEY.test(key) ||
        key === '.' ||
        key === '..'
      ) {
        causes.push({
          field: `${field}[${key}]`,
          message: `Invalid value: "${key}": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')`,
        });
      } else if (seen.has(key)) {
        causes.push({
          field: `${field}[${key}]`,
          message: `Invalid value: "${key}": duplicate of key present in data`,
        });
      }
      seen.add(key);
    }
  }
}

/** The reasons IsValidPathSegmentName gives for a scaleTargetRef's kind or name. */
function pathSegmentProblems(value: string): string[] {
  if (value === '.') return ["may not be '.'"];
  if (value === '..') return ["may not be '..'"];
  return ['/', '%']
    .filter(c => value.includes(c))
    .map(c => `may not contain '${c}'`);
}

/** ValidateCrossVersionObjectReference: kind and name are required path segments. */
function validateScaleTargetRef(ref: any, causes: Cause[]) {
  for (const field of ['kind', 'name'] as const) {
    const value = ref?.[field];
    const path = `spec.scaleTargetRef.${field}`;
    if (typeof value !== 'string' || value === '') {
      causes.push({
        field: path,
        message: 'Required value',
        reason: 'FieldValueRequired',
      });
      continue;
    }
    for (const problem of pathSegmentProblems(value))
      causes.push({
        field: path,
        message: `Invalid value: ${JSON.stringify(value)}: ${problem}`,
      });
  }
}

/** validateHorizontalPodAutoscalerSpec, as far as the replica bounds and the target (metrics and behavior are not checked). */
function validateAutoscalerSpec(spec: any, causes: Cause[]) {
  const min = spec?.minReplicas;
  const max = spec?.maxReplicas ?? 0;
  if (min !== undefined && min < 1)
    causes.push({
      field: 'spec.minReplicas',
      message: `Invalid value: ${min}: must be greater than or equal to 1`,
    });
  if (max < 1)
    causes.push({
      field: 'spec.maxReplicas',
      message: `Invalid value: ${max}: must be greater than 0`,
    });
  if (min !== undefined && max < min)
    causes.push({
      field: 'spec.maxReplicas',
      message: `Invalid value: ${max}: must be greater than or equal to \`minReplicas\``,
    });
  validateScaleTargetRef(spec?.scaleTargetRef, causes);
}

/**
 * What kube-apiserver's decoder refuses before validation: a replica bound
 * of an HPA that is not an int32 (a 400, not a 422).
 */
function decodeAutoscalerSpec(spec: any) {
  for (const field of ['minReplicas', 'maxReplicas']) {
    const value = spec?.[field];
    if (value === undefined || value === null) continue;
    if (
      typeof value !== 'number' ||
      !Number.isInteger(value) ||
      Math.abs(value) > 2 ** 31 - 1
    )
      throw errors.badRequest(
        `json: cannot unmarshal ${
          typeof value === 'number' ? `number ${value}` : typeof value
        } into Go struct field HorizontalPodAutoscalerSpec.spec.${field} of type int32`,
      );
  }
}

function validateSpec(
  obj: KubeObject,
  old: KubeObject | undefined,
  causes: Cause[],
) {
  const spec = obj.spec;
  switch (obj.kind) {
    case 'PersistentVolumeClaim':
      validatePvcSpec(spec, 'spec', causes);
      // volumeName may be set once, when the claim is bound (ValidatePersistentVolumeClaimUpdate).
      if (
        old &&
        (JSON.stringify({
          ...old.spec,
          resources: undefined,
          volumeName: undefined,
        }) !==
          JSON.stringify({
            ...spec,
            resources: undefined,
            volumeName: undefined,
          }) ||
          (old.spec.volumeName && old.spec.volumeName !== spec.volumeName))
      ) {
        causes.push({
          field: 'spec',
          message:
            'Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims',
          reason: 'FieldValueForbidden',
        });
      }
      break;
    case 'PersistentVolume':
      if (!isQuantity(spec?.capacity?.storage)) {
        causes.push({
          field: 'spec.capacity',
          message: 'Required value',
          reason: 'FieldValueRequired',
        });
      }
      break;
    case 'Pod':
      if (!Array.isArray(spec?.containers) || spec.containers.length === 0) {
        causes.push({
          field: 'spec.containers',
          message: 'Required value',
          reason: 'FieldValueRequired',
        });
      }
      break;
    case 'StatefulSet': {
      if (!Number.isInteger(spec?.replicas) || spec.replicas < 0) {
        causes.push({
          field: 'spec.replicas',
          message: `Invalid value: ${JSON.stringify(
            spec?.replicas,
          )}: must be greater than or equal to 0`,
        });
      }
      const start = spec?.ordinals?.start;
      if (start !== undefined && (!Number.isInteger(start) || start < 0)) {
        causes.push({
          field: 'spec.ordinals.start',
          message: `Invalid value: ${JSON.stringify(
            start,
          )}: must be greater than or equal to 0`,
        });
      }
      if (
        !spec?.selector ||
        (!spec.selector.matchLabels && !spec.selector.matchExpressions)
      ) {
        causes.push({
          field: 'spec.selector',
          message: 'Required value',
          reason: 'FieldValueRequired',
        });
      } else if (
        !labelSelectorMatcher(spec.selector)(spec.template?.metadata?.labels)
      ) {
        causes.push({
          field: 'spec.template.metadata.labels',
          message: `Invalid value: ${JSON.stringify(
            spec.template?.metadata?.labels ?? {},
          )}: \`selector\` does not match template \`labels\``,
        });
      }
      if (
        !Array.isArray(spec?.template?.spec?.containers) ||
        spec.template.spec.containers.length === 0
      ) {
        causes.push({
          field: 'spec.template.spec.containers',
          message: 'Required value',
          reason: 'FieldValueRequired',
        });
      }
      (spec?.volumeClaimTemplates ?? []).forEach((t: any, i: number) => {
        if (!t?.metadata?.name || !DNS_LABEL.test(t.metadata.name)) {
          causes.push({
            field: `spec.volumeClaimTemplates[${i}].metadata.name`,
            message: 'Invalid value: must be a DNS label',
          });
        }
        validatePvcSpec(
          t?.spec,
          `spec.volumeClaimTemplates[${i}].spec`,
          causes,
        );
      });
      if (old) {
        const frozen = (s: any) =>
          JSON.stringify([
            s?.selector,
            s?.volumeClaimTemplates,
            s?.serviceName,
            s?.podManagementPolicy,
          ]);
        if (frozen(old.spec) !== frozen(spec)) {
          causes.push({
            field: 'spec',
            message:
              "Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
            reason: 'FieldValueForbidden',
          });
        }
      }
      break;
    }
    case 'ConfigMap':
      validateConfigMap(obj, old, causes);
      break;
    case 'HorizontalPodAutoscaler':
      validateAutoscalerSpec(spec, causes);
      break;
    case 'Lease': {
      const d = spec?.leaseDurationSeconds;
      if (d !== undefined && (!Number.isInteger(d) || d <= 0)) {
        causes.push({
          field: 'spec.leaseDurationSeconds',
          message: `Invalid value: ${d}: must be greater than 0`,
        });
      }
      break;
    }
    default:
  }
}

function applyDefaults(
  obj: KubeObject,
  old: KubeObject | undefined,
  lookupDefaultClass?: () => string | undefined,
) {
  const spec = obj.spec;
  switch (obj.kind) {
    case 'PersistentVolumeClaim':
      obj.spec.volumeMode ??= 'Filesystem';
      // AnyVolumeDataSource: dataSource and dataSourceRef mirror each other when only one is given.
      if (!old && spec.dataSource && !spec.dataSourceRef)
        spec.dataSourceRef = { ...spec.dataSource };
      else if (
        !old &&
        spec.dataSourceRef &&
        !spec.dataSource &&
        !spec.dataSourceRef.namespace
      )
        spec.dataSource = { ...spec.dataSourceRef };
      if (spec.storageClassName === undefined) {
        const name = lookupDefaultClass?.();
        if (name) spec.storageClassName = name;
      }
      obj.status ??= { phase: 'Pending' };
      break;
    case 'PersistentVolume':
      spec.persistentVolumeReclaimPolicy ??= spec.claimRef
        ? 'Delete'
        : 'Retain';
      spec.volumeMode ??= 'Filesystem';
      obj.status ??= { phase: 'Pending' };
      break;
    case 'Pod':
      spec.terminationGracePeriodSeconds ??= 30;
      spec.restartPolicy ??= 'Always';
      obj.status ??= { phase: 'Pending' };
      break;
    case 'StatefulSet':
      spec.replicas ??= 1;
      spec.podManagementPolicy ??= 'OrderedReady';
      spec.updateStrategy ??= {
        type: 'RollingUpdate',
        rollingUpdate: { partition: 0 },
      };
      spec.revisionHistoryLimit ??= 10;
      spec.persistentVolumeClaimRetentionPolicy ??= {
        whenDeleted: 'Retain',
        whenScaled: 'Retain',
      };
      spec.persistentVolumeClaimRetentionPolicy.whenDeleted ??= 'Retain';
      spec.persistentVolumeClaimRetentionPolicy.whenScaled ??= 'Retain';
      for (const t of spec.volumeClaimTemplates ?? []) {
        t.apiVersion ??= 'v1';
        t.kind ??= 'PersistentVolumeClaim';
        t.spec.volumeMode ??= 'Filesystem';
      }
      obj.status ??= { replicas: 0, availableReplicas: 0 };
      break;
    case 'HorizontalPodAutoscaler':
      // SetDefaults_HorizontalPodAutoscaler (autoscaling/v2); behavior is not defaulted.
      spec.minReplicas ??= 1;
      if (!Array.isArray(spec.metrics) || spec.metrics.length === 0)
        spec.metrics = [
          {
            type: 'Resource',
            resource: {
              name: 'cpu',
              target: { type: 'Utilization', averageUtilization: 80 },
            },
          },
        ];
      break;
    case 'StorageClass':
      obj.reclaimPolicy ??= 'Delete';
      obj.volumeBindingMode ??= 'Immediate';
      break;
    case 'Namespace':
      obj.spec ??= { finalizers: ['kubernetes'] };
      obj.status ??= { phase: 'Active' };
      break;
    default:
  }
}

/**
 * Defaulting, mutating admission (pvc/pv protection finalizers, default
 * StorageClass) and validation, as kube-apiserver runs them on every write.
 */
export function admit(
  type: ResourceType,
  obj: KubeObject,
  old: KubeObject | undefined,
  lookupDefaultClass: () => string | undefined,
): KubeObject {
  const causes: Cause[] = [];
  if (typeof obj.metadata !== 'object' || obj.metadata === null) {
    throw errors.invalid({ group: type.group, kind: type.kind }, [
      {
        field: 'metadata',
        message: 'Required value',
        reason: 'FieldValueRequired',
      },
    ]);
  }
  if (obj.kind === 'HorizontalPodAutoscaler') {
    decodeAutoscalerSpec(obj.spec);
    // PrepareForCreate: the status is the controller's, never the client's.
    if (!old) obj.status = { desiredReplicas: 0 };
  }
  validateName(type, obj.metadata.name, causes);
  validateLabels(obj.metadata.labels, 'metadata.labels', causes);
  if (
    !type.customResource &&
    type.kind !== 'StorageClass' &&
    type.kind !== 'Namespace' &&
    type.kind !== 'Event' &&
    type.kind !== 'ConfigMap' &&
    obj.spec === undefined
  ) {
    obj.spec = {};
  }
  applyDefaults(obj, old, old ? undefined : lookupDefaultClass);
  if (!old) {
    const protection = PROTECTION_FINALIZERS[obj.kind];
    if (protection && !obj.metadata.finalizers?.includes(protection)) {
      obj.metadata.finalizers = [
        ...(obj.metadata.finalizers ?? []),
        protection,
      ];
    }
  }
  if (causes.length === 0) validateSpec(obj, old, causes);
  if (causes.length === 0 && type.customResource) {
    // What the request handler has not refused (fieldValidation=Strict) is dropped, as for any CRD.
    const schema = SNAPSHOT_SCHEMAS[type.kind];
    prune(schema, obj);
    causes.push(...validateAgainstSchema(schema, obj));
    if (causes.length === 0) causes.push(...snapshotRules(obj, old));
  }
  if (causes.length > 0) {
    throw errors.invalid(
      { group: type.group, kind: type.kind, name: obj.metadata.name },
      causes,
    );
  }
  return obj;
}
