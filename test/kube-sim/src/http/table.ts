import { PRINTER_COLUMNS, PrinterColumn } from '../snapshots/schemas';
import { KubeObject } from '../types';

type Column = {
  name: string;
  type: string;
  format?: string;
  priority?: number;
  /** null: the field is unset (kubectl prints <none>). */
  cell: (o: KubeObject) => string | number | boolean | null;
};

/** Age as kubectl prints it (apimachinery's HumanDuration). */
export function humanAge(since: string | undefined, now = Date.now()): string {
  if (!since) return '<unknown>';
  const seconds = Math.max(0, Math.floor((now - Date.parse(since)) / 1000));
  const minutes = Math.floor(seconds / 60);
  const hours = Math.floor(minutes / 60);
  const days = Math.floor(hours / 24);
  if (seconds < 120) return `${seconds}s`;
  if (minutes < 10)
    return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  if (minutes < 180) return `${minutes}m`;
  if (hours < 8)
    return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8)
    return hours % 24 === 0 ? `${days}d` : `${days}d${hours % 24}h`;
  if (days < 365 * 2) return `${days}d`;
  return `${Math.floor(days / 365)}y`;
}

const name: Column = {
  name: 'Name',
  type: 'string',
  format: 'name',
  cell: o => o.metadata.name,
};
const age: Column = {
  name: 'Age',
  type: 'string',
  cell: o => humanAge(o.metadata.creationTimestamp),
};
const accessModes = (modes: string[] | undefined) =>
  (modes ?? [])
    .map(
      m =>
        ((
          {
            ReadWriteOnce: 'RWO',
            ReadOnlyMany: 'ROX',
            ReadWriteMany: 'RWX',
            ReadWriteOncePod: 'RWOP',
          } as Record<string, string>
        )[m] ?? m),
    )
    .join(',');

function podStatus(o: KubeObject) {
  if (o.metadata.deletionTimestamp) return 'Terminating';
  const waiting = (o.status?.containerStatuses ?? []).find(
    (c: any) => c.state?.waiting,
  )?.state.waiting.reason;
  return waiting ?? o.status?.phase ?? 'Pending';
}

/** One metric of an HPA as formatHPAMetrics prints it: `cpu: <unknown>/80%`, `<unknown>/10 (avg)`. */
function hpaMetric(spec: any, status: any): string {
  const quantity = (v: unknown) => (v === undefined ? '' : String(v));
  switch (spec?.type) {
    case 'External':
    case 'Object': {
      const key = spec.type === 'External' ? 'external' : 'object';
      const target = spec[key]?.target ?? {};
      const current = status?.[key]?.current;
      if (target.averageValue !== undefined)
        return `${quantity(current?.averageValue) || '<unknown>'}/${quantity(
          target.averageValue,
        )} (avg)`;
      return `${quantity(current?.value) || '<unknown>'}/${quantity(
        target.value,
      )}`;
    }
    case 'Pods':
      return `${
        quantity(status?.pods?.current?.averageValue) || '<unknown>'
      }/${quantity(spec.pods?.target?.averageValue)}`;
    case 'Resource':
    case 'ContainerResource': {
      const key = spec.type === 'Resource' ? 'resource' : 'containerResource';
      const { name: resource, target = {} } = spec[key] ?? {};
      const current = status?.[key]?.current;
      if (target.averageValue !== undefined)
        return `${resource}: ${
          quantity(current?.averageValue) || '<unknown>'
        }/${quantity(target.averageValue)}`;
      const used =
        current?.averageUtilization !== undefined
          ? `${current.averageUtilization}%`
          : '<unknown>';
      const goal =
        target.averageUtilization !== undefined
          ? `${target.averageUtilization}%`
          : '<auto>';
      return `${resource}: ${used}/${goal}`;
    }
    default:
      return '<unknown type>';
  }
}

/** The TARGETS of `kubectl get hpa`: the first two metrics, and how many more. */
function hpaTargets(o: KubeObject): string {
  const specs: any[] = o.spec?.metrics ?? [];
  if (specs.length === 0) return '<none>';
  const statuses: any[] = o.status?.currentMetrics ?? [];
  const shown = specs.slice(0, 2).map((m, i) => hpaMetric(m, statuses[i]));
  return specs.length > 2
    ? `${shown.join(', ')} + ${specs.length - 2} more...`
    : shown.join(', ');
}

const COLUMNS: Record<string, Column[]> = {
  Pod: [
    name,
    {
      name: 'Ready',
      type: 'string',
      cell: o =>
        `${
          (o.status?.containerStatuses ?? []).filter((c: any) => c.ready).length
        }/${o.spec?.containers?.length ?? 0}`,
    },
    { name: 'Status', type: 'string', cell: podStatus },
    {
      name: 'Restarts',
      type: 'string',
      cell: o =>
        String(
          (o.status?.containerStatuses ?? []).reduce(
            (n: number, c: any) => n + (c.restartCount ?? 0),
            0,
          ),
        ),
    },
    age,
    {
      name: 'IP',
      type: 'string',
      priority: 1,
      cell: o => o.status?.podIP ?? '<none>',
    },
    {
      name: 'Node',
      type: 'string',
      priority: 1,
      cell: o => o.spec?.nodeName ?? '<none>',
    },
  ],
  PersistentVolumeClaim: [
    name,
    {
      name: 'Status',
      type: 'string',
      cell: o =>
        o.metadata.deletionTimestamp
          ? 'Terminating'
          : o.status?.phase ?? 'Pending',
    },
    { name: 'Volume', type: 'string', cell: o => o.spec?.volumeName ?? '' },
    {
      name: 'Capacity',
      type: 'string',
      cell: o => o.status?.capacity?.storage ?? '',
    },
    {
      name: 'Access Modes',
      type: 'string',
      cell: o => accessModes(o.status?.accessModes),
    },
    {
      name: 'StorageClass',
      type: 'string',
      cell: o => o.spec?.storageClassName ?? '<unset>',
    },
    {
      name: 'VolumeAttributesClass',
      type: 'string',
      cell: o => o.spec?.volumeAttributesClassName ?? '<unset>',
    },
    age,
    {
      name: 'VolumeMode',
      type: 'string',
      priority: 1,
      cell: o => o.spec?.volumeMode ?? '',
    },
  ],
  PersistentVolume: [
    name,
    {
      name: 'Capacity',
      type: 'string',
      cell: o => o.spec?.capacity?.storage ?? '',
    },
    {
      name: 'Access Modes',
      type: 'string',
      cell: o => accessModes(o.spec?.accessModes),
    },
    {
      name: 'Reclaim Policy',
      type: 'string',
      cell: o => o.spec?.persistentVolumeReclaimPolicy ?? '',
    },
    {
      name: 'Status',
      type: 'string',
      cell: o =>
        o.metadata.deletionTimestamp ? 'Terminating' : o.status?.phase ?? '',
    },
    {
      name: 'Claim',
      type: 'string',
      cell: o =>
        o.spec?.claimRef
          ? `${o.spec.claimRef.namespace}/${o.spec.claimRef.name}`
          : '',
    },
    {
      name: 'StorageClass',
      type: 'string',
      cell: o => o.spec?.storageClassName ?? '',
    },
    {
      name: 'VolumeAttributesClass',
      type: 'string',
      cell: o => o.spec?.volumeAttributesClassName ?? '<unset>',
    },
    { name: 'Reason', type: 'string', cell: o => o.status?.reason ?? '' },
    age,
  ],
  StatefulSet: [
    name,
    {
      name: 'Ready',
      type: 'string',
      cell: o => `${o.status?.readyReplicas ?? 0}/${o.spec?.replicas ?? 0}`,
    },
    age,
    {
      name: 'Containers',
      type: 'string',
      priority: 1,
      cell: o =>
        (o.spec?.template?.spec?.containers ?? [])
          .map((c: any) => c.name)
          .join(','),
    },
    {
      name: 'Images',
      type: 'string',
      priority: 1,
      cell: o =>
        (o.spec?.template?.spec?.containers ?? [])
          .map((c: any) => c.image)
          .join(','),
    },
  ],
  HorizontalPodAutoscaler: [
    name,
    {
      name: 'Reference',
      type: 'string',
      cell: o =>
        `${o.spec?.scaleTargetRef?.kind ?? ''}/${
          o.spec?.scaleTargetRef?.name ?? ''
        }`,
    },
    { name: 'Targets', type: 'string', cell: hpaTargets },
    {
      name: 'MinPods',
      type: 'string',
      cell: o =>
        o.spec?.minReplicas === undefined
          ? '<unset>'
          : String(o.spec.minReplicas),
    },
    { name: 'MaxPods', type: 'string', cell: o => o.spec?.maxReplicas ?? 0 },
    {
      name: 'Replicas',
      type: 'string',
      cell: o => o.status?.currentReplicas ?? 0,
    },
    age,
  ],
  StorageClass: [
    {
      ...name,
      cell: o =>
        o.metadata.annotations?.[
          'storageclass.kubernetes.io/is-default-class'
        ] === 'true'
          ? `${o.metadata.name} (default)`
          : o.metadata.name,
    },
    { name: 'Provisioner', type: 'string', cell: o => o.provisioner ?? '' },
    {
      name: 'ReclaimPolicy',
      type: 'string',
      cell: o => o.reclaimPolicy ?? 'Delete',
    },
    {
      name: 'VolumeBindingMode',
      type: 'string',
      cell: o => o.volumeBindingMode ?? 'Immediate',
    },
    {
      name: 'AllowVolumeExpansion',
      type: 'boolean',
      cell: o => String(o.allowVolumeExpansion ?? false),
    },
    age,
  ],
  CustomResourceDefinition: [
    name,
    {
      name: 'Created At',
      type: 'date',
      cell: o => o.metadata.creationTimestamp,
    },
  ],
  Namespace: [
    name,
    { name: 'Status', type: 'string', cell: o => o.status?.phase ?? 'Active' },
    age,
  ],
  ConfigMap: [
    name,
    {
      name: 'Data',
      type: 'integer',
      cell: o =>
        Object.keys(o.data ?? {}).length +
        Object.keys(o.binaryData ?? {}).length,
    },
    age,
  ],
  Lease: [
    name,
    { name: 'Holder', type: 'string', cell: o => o.spec?.holderIdentity ?? '' },
    age,
  ],
  Event: [
    {
      name: 'Last Seen',
      type: 'string',
      cell: o =>
        humanAge(
          o.lastTimestamp ?? o.eventTime ?? o.metadata.creationTimestamp,
        ),
    },
    { name: 'Type', type: 'string', cell: o => o.type ?? '' },
    { name: 'Reason', type: 'string', cell: o => o.reason ?? '' },
    {
      name: 'Object',
      type: 'string',
      cell: o =>
        `${(o.involvedObject?.kind ?? '').toLowerCase()}/${
          o.involvedObject?.name ?? ''
        }`,
    },
    { name: 'Message', type: 'string', cell: o => o.message ?? '' },
  ],
};

/** The value at a simple `.a.b.c` JSON path. */
function atPath(o: unknown, jsonPath: string): unknown {
  return jsonPath
    .split('.')
    .filter(Boolean)
    .reduce<any>((v, key) => (v === null || v === undefined ? v : v[key]), o);
}

/** An additionalPrinterColumn as apiextensions-apiserver renders it: dates as ages, missing values as null. */
function printerColumn(c: PrinterColumn): Column {
  return {
    name: c.name,
    type: c.type,
    priority: c.priority,
    cell: o => {
      const value = atPath(o, c.jsonPath);
      if (value === undefined || value === null) return null;
      if (c.type === 'date') return humanAge(String(value));
      if (c.type === 'boolean' && typeof value === 'boolean') return value;
      if (c.type === 'integer' && typeof value === 'number') return value;
      return typeof value === 'object' ? JSON.stringify(value) : String(value);
    },
  };
}

for (const [kind, columns] of Object.entries(PRINTER_COLUMNS))
  COLUMNS[kind] = [name, ...columns.map(printerColumn)];

export type IncludeObject = 'None' | 'Metadata' | 'Object';

function rowObject(o: KubeObject, include: IncludeObject) {
  if (include === 'None') return undefined;
  if (include === 'Object') return o;
  return {
    kind: 'PartialObjectMetadata',
    apiVersion: 'meta.k8s.io/v1',
    metadata: o.metadata,
  };
}

/** A meta.k8s.io/v1 Table of objects of one kind, as `kubectl get` asks for. */
export function toTable(
  kind: string,
  objects: KubeObject[],
  include: IncludeObject,
  listMeta: { resourceVersion?: string; continue?: string } = {},
) {
  const columns = COLUMNS[kind] ?? [name, age];
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: listMeta,
    columnDefinitions: columns.map(c => ({
      name: c.name,
      type: c.type,
      format: c.format ?? '',
      description: c.name,
      priority: c.priority ?? 0,
    })),
    rows: objects.map(o => ({
      cells: columns.map(c => c.cell(o)),
      object: rowObject(o, include),
    })),
  };
}
