import {
  OrphanedPvc,
  StatefulSetOrphans,
} from 'backstage-plugin-pvc-pruner-common';

export const GIB = 2 ** 30;

/**
 * The claim of volume template `data` at `ordinal` of `statefulSet`, as the
 * orphan finder reports it: `gib` GiB of StorageClass standard, reattached
 * once the StatefulSet scales back past its ordinal.
 */
export function orphanedClaim(
  statefulSet: string,
  ordinal: number,
  gib: number,
  overrides: Partial<OrphanedPvc> = {},
): OrphanedPvc {
  return {
    name: `data-${statefulSet}-${ordinal}`,
    uid: `uid-data-${statefulSet}-${ordinal}`,
    resourceVersion: '1',
    ordinal,
    template: 'data',
    requestedBytes: gib * GIB,
    storageClassName: 'standard',
    reattachesAtReplicas: ordinal + 1,
    ...overrides,
  };
}

/**
 * A StatefulSet scaled down to one replica (ordinal 0) of volume template
 * `data`, as the orphan finder reports it; what it could reclaim is the sum
 * of its orphans unless `overrides` says otherwise.
 */
export function statefulSetReport(
  namespace: string,
  name: string,
  orphans: OrphanedPvc[],
  overrides: Partial<StatefulSetOrphans> = {},
): StatefulSetOrphans {
  return {
    name,
    namespace,
    uid: `uid-${namespace}-${name}`,
    replicas: 1,
    ordinals: { start: 0, end: 1 },
    readyReplicas: 1,
    retentionPolicy: { whenScaled: 'Retain', whenDeleted: 'Retain' },
    templates: ['data'],
    inUse: [],
    kept: [],
    orphans,
    reclaimableBytes: orphans.reduce((n, o) => n + o.requestedBytes, 0),
    retainedBytes: 0,
    ...overrides,
  };
}
