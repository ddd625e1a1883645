import {
  ClusterOrphans,
  InUsePvcs,
  KeptPvc,
  KeptSnapshot,
  OrphanedPvc,
  OrphansResponse,
  PruneEvent,
  PruneJob,
  ReleasedVolume,
  SnapshotsResponse,
  StatefulSetOrphans,
  emptyPruneSummary,
} from 'backstage-plugin-pvc-pruner-common';

export const GiB = 2 ** 30;

export function makeOrphan(
  statefulSet: string,
  ordinal: number,
  overrides: Partial<OrphanedPvc> = {},
): OrphanedPvc {
  const name = `data-${statefulSet}-${ordinal}`;
  return {
    name,
    uid: `uid-${name}`,
    resourceVersion: '1',
    ordinal,
    template: 'data',
    phase: 'Bound',
    requested: '10Gi',
    requestedBytes: 10 * GiB,
    capacity: '10Gi',
    capacityBytes: 10 * GiB,
    storageClassName: 'standard',
    volume: {
      name: `pv-${name}`,
      reclaimPolicy: 'Delete',
      phase: 'Bound',
      retained: false,
    },
    createdAt: new Date(Date.now() - 3 * 86400_000).toISOString(),
    reattachesAtReplicas: ordinal + 1,
    ...overrides,
  };
}

export function makeStatefulSet(
  name: string,
  options: {
    replicas?: number;
    orphans?: OrphanedPvc[];
    inUse?: InUsePvcs[];
    kept?: KeptPvc[];
    namespace?: string;
  } = {},
): StatefulSetOrphans {
  const replicas = options.replicas ?? 2;
  const orphans = options.orphans ?? [
    makeOrphan(name, replicas),
    makeOrphan(name, replicas + 1),
  ];
  const size = (o: OrphanedPvc) => o.capacityBytes ?? o.requestedBytes;
  return {
    name,
    namespace: options.namespace ?? 'shop',
    uid: `uid-sts-${name}`,
    replicas,
    ordinals: { start: 0, end: replicas },
    readyReplicas: replicas,
    retentionPolicy: { whenScaled: 'Retain', whenDeleted: 'Retain' },
    templates: ['data'],
    orphans,
    inUse: options.inUse ?? [],
    kept: options.kept ?? [],
    reclaimableBytes: orphans
      .filter(o => !o.volume?.retained)
      .reduce((n, o) => n + size(o), 0),
    retainedBytes: orphans
      .filter(o => o.volume?.retained)
      .reduce((n, o) => n + size(o), 0),
  };
}

export function makeResponse(
  clusters: ClusterOrphans[],
  entityRef = 'component:default/shop',
): OrphansResponse {
  const all = clusters.flatMap(c => (c.ok ? c.statefulSets : []));
  return {
    entityRef,
    clusters,
    totals: {
      orphans: all.reduce((n, s) => n + s.orphans.length, 0),
      reclaimableBytes: all.reduce((n, s) => n + s.reclaimableBytes, 0),
      retainedBytes: all.reduce((n, s) => n + s.retainedBytes, 0),
    },
  };
}

/** A scan of prod, the entity's one cluster, that found these StatefulSets. */
export function makeProdResponse(
  ...statefulSets: StatefulSetOrphans[]
): OrphansResponse {
  return makeResponse([{ cluster: 'prod', ok: true, statefulSets }]);
}

export function makeJob(overrides: Partial<PruneJob> = {}): PruneJob {
  return {
    id: 'job-1',
    entityRef: 'component:default/shop',
    cluster: 'prod',
    namespace: 'shop',
    statefulSet: 'db',
    dryRun: false,
    status: 'succeeded',
    requestedBy: 'user:default/guest',
    pvcs: [{ name: 'data-db-2', uid: 'uid-data-db-2' }],
    createdAt: '2026-11-30T10:00:00.000Z',
    startedAt: '2026-11-30T10:00:01.000Z',
    finishedAt: '2026-11-30T10:00:05.000Z',
    summary: emptyPruneSummary(),
    ...overrides,
  };
}

/** Builds a job's events with increasing seq numbers. */
export function eventFactory(jobId = 'job-1') {
  let seq = 0;
  return (
    type: PruneEvent['type'],
    overrides: Partial<PruneEvent> = {},
  ): PruneEvent => {
    seq += 1;
    return {
      jobId,
      seq,
      type,
      at: new Date(Date.UTC(2026, 10, 30, 10, 0, seq)).toISOString(),
      message: `${type}${overrides.pvc ? ` ${overrides.pvc}` : ''}`,
      ...overrides,
    };
  };
}

/** A ready snapshot that the job took of claim data-db-2 of prod's shop/db. */
export function makeKeptSnapshot(
  overrides: Partial<KeptSnapshot> = {},
): KeptSnapshot {
  return {
    name: 'data-db-2-0a1b2c3d',
    namespace: 'shop',
    uid: 'snap-uid-1',
    statefulSet: 'db',
    claimName: 'data-db-2',
    claimUid: 'uid-data-db-2',
    jobId: 'job-1',
    createdAt: '2026-11-30T10:00:03.000Z',
    readyToUse: true,
    restoreBytes: 20 * GiB,
    restoreSize: '20Gi',
    expiresAt: '2026-12-07T10:00:03.000Z',
    restorable: true,
    ...overrides,
  };
}

/** The snapshots of prod's shop/db, summed. */
export function makeSnapshotsResponse(
  ...snapshots: KeptSnapshot[]
): SnapshotsResponse {
  return {
    entityRef: 'component:default/shop',
    clusters: [
      {
        cluster: 'prod',
        ok: true,
        statefulSets:
          snapshots.length > 0
            ? [{ namespace: 'shop', name: 'db', snapshots }]
            : [],
      },
    ],
    totals: {
      snapshots: snapshots.length,
      bytes: snapshots.reduce((n, s) => n + (s.restoreBytes ?? 0), 0),
    },
  };
}

/** A Released volume of search-index's claim data-search-index-`n`, 100 GiB on premium-retain, that the user may reclaim. */
export function makeReleasedVolume(
  n: number,
  overrides: Partial<ReleasedVolume> = {},
): ReleasedVolume {
  return {
    cluster: 'demo',
    name: `pvc-${n}`,
    uid: `pv-uid-${n}`,
    resourceVersion: `${100 + n}`,
    bytes: 100 * 2 ** 30,
    storageClass: 'premium-retain',
    reclaimPolicy: 'Retain',
    monthlyCost: 17,
    releasedSince: '2026-12-01T10:00:00.000Z',
    claim: {
      namespace: 'search',
      name: `data-search-index-${n}`,
      uid: `claim-uid-${n}`,
    },
    statefulSet: { name: 'search-index', uid: 'sts-uid' },
    entityRef: 'component:default/search',
    claimants: ['component:default/search'],
    reclaimable: true,
    canReclaim: true,
    ...overrides,
  };
}
