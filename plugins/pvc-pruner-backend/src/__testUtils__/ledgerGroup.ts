import type { FoundGroup } from '../leftBehind';

/** The claim data-ledger-db-0 (uid claim-0) that the deleted StatefulSet payments/ledger-db left, recorded as the ledger entity's. */
export function ledgerGroup(overrides: Partial<FoundGroup> = {}): FoundGroup {
  return {
    namespace: 'payments',
    statefulSet: { name: 'ledger-db', uid: 'deleted-uid' },
    evidence: 'lineage',
    lastSeenAt: '2026-12-03T10:00:00.000Z',
    claimants: ['component:default/ledger'],
    crowded: false,
    report: {
      name: 'ledger-db',
      namespace: 'payments',
      uid: 'deleted-uid',
      replicas: 0,
      ordinals: { start: 0, end: 0 },
      readyReplicas: 0,
      retentionPolicy: { whenScaled: 'Retain', whenDeleted: 'Retain' },
      templates: ['data'],
      orphans: [
        {
          name: 'data-ledger-db-0',
          uid: 'claim-0',
          resourceVersion: '1',
          ordinal: 0,
          template: 'data',
          requestedBytes: 1,
          reattachesAtReplicas: 1,
        },
      ],
      inUse: [],
      kept: [],
      reclaimableBytes: 1,
      retainedBytes: 0,
    },
    ...overrides,
  };
}
