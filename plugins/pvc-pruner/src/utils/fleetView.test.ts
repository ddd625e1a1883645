import {
  FleetResponse,
  FleetStatefulSet,
} from 'backstage-plugin-pvc-pruner-common';
import {
  FleetSortKey,
  fleetCsv,
  fleetGroups,
  sortedUnowned,
} from './fleetView';

const GIB = 2 ** 30;

function sts(
  name: string,
  gib: number,
  cost: number,
  firstSeen?: string,
): FleetStatefulSet {
  return {
    cluster: 'prod',
    namespace: 'shop',
    name,
    orphans: 1,
    reclaimableBytes: gib * GIB,
    retainedBytes: 0,
    reclaimableMonthlyCost: cost,
    retainedMonthlyCost: 0,
    ...(firstSeen ? { firstSeenOrphanedAt: firstSeen } : {}),
  };
}

const totals = (gib: number, cost: number) => ({
  orphans: 1,
  reclaimableBytes: gib * GIB,
  retainedBytes: 0,
  reclaimableMonthlyCost: cost,
  retainedMonthlyCost: 0,
});

const FLEET: FleetResponse = {
  clusters: [{ cluster: 'prod', ok: true }],
  entitiesScanned: 3,
  totals: { entities: 3, statefulSets: 3, ...totals(111, 11.1) },
  owners: [
    {
      owner: 'group:default/a',
      entities: 2,
      totals: totals(11, 10.1),
      firstSeenOrphanedAt: '2026-11-20T00:00:00Z',
    },
    {
      owner: 'group:default/b',
      entities: 1,
      totals: totals(100, 1),
      firstSeenOrphanedAt: '2026-11-01T00:00:00Z',
    },
  ],
  items: [
    {
      entityRef: 'component:default/a1',
      owner: 'group:default/a',
      statefulSets: [sts('a1-db', 1, 10, '2026-11-20T00:00:00Z')],
      totals: totals(1, 10),
      firstSeenOrphanedAt: '2026-11-20T00:00:00Z',
    },
    {
      entityRef: 'component:default/a2',
      owner: 'group:default/a',
      statefulSets: [sts('a2-db', 10, 0.1)],
      totals: totals(10, 0.1),
    },
    {
      entityRef: 'component:default/b1',
      owner: 'group:default/b',
      statefulSets: [sts('b1, "main"', 100, 1, '2026-11-01T00:00:00Z')],
      totals: totals(100, 1),
      firstSeenOrphanedAt: '2026-11-01T00:00:00Z',
    },
  ],
  unowned: {
    statefulSets: [sts('old', 5, 0.5)],
    totals: totals(5, 0.5),
    prunable: false,
  },
  pricing: { currency: 'EUR', unpricedStorageClasses: [] },
};

/** Each owner with its entities, in order: `group:default/b: b1; group:default/a: a2, a1`. */
const order = (groups: ReturnType<typeof fleetGroups>) =>
  groups
    .map(
      g =>
        `${g.owner.owner}: ${g.entities
          .map(e => e.entityRef.split('/')[1])
          .join(', ')}`,
    )
    .join('; ');

describe('fleetGroups', () => {
  it.each<[FleetSortKey, boolean, string]>([
    ['storage', true, 'group:default/b: b1; group:default/a: a2, a1'],
    ['cost', true, 'group:default/a: a1, a2; group:default/b: b1'],
    ['seen', true, 'group:default/b: b1; group:default/a: a1, a2'],
    ['storage', false, 'group:default/a: a1, a2; group:default/b: b1'],
  ])(
    'sorts owners and their entities by %s (descending: %s)',
    (key, descending, expected) => {
      expect(order(fleetGroups(FLEET, { key, descending }))).toBe(expected);
    },
  );

  it('leaves out entities (and owners) with only claims of deleted StatefulSets: their own section lists them', () => {
    const leftOnly = {
      entityRef: 'component:default/c1',
      owner: 'group:default/c',
      statefulSets: [],
      totals: totals(0, 0),
      leftBehind: { statefulSets: [], totals: totals(5, 0.5) },
    };
    const fleet: FleetResponse = {
      ...FLEET,
      owners: [
        ...FLEET.owners,
        { owner: 'group:default/c', entities: 1, totals: totals(0, 0) },
      ],
      items: [...FLEET.items, leftOnly],
    };
    expect(
      order(fleetGroups(fleet, { key: 'storage', descending: true })),
    ).toBe('group:default/b: b1; group:default/a: a2, a1');
  });
});

describe('fleetCsv', () => {
  it('has one row per StatefulSet shown, in the order shown, quoted where needed', () => {
    const groups = fleetGroups(FLEET, { key: 'storage', descending: true });
    const csv = fleetCsv(
      groups,
      sortedUnowned(FLEET, { key: 'storage', descending: true }),
      'EUR',
    );
    expect(csv.split('\n')).toEqual([
      'owner,entity,cluster,namespace,statefulset,orphans,reclaimable_gib,retained_gib,reclaimable_monthly_cost_EUR,retained_monthly_cost_EUR,first_seen_orphaned_at,shared_with,kind',
      'group:default/b,component:default/b1,prod,shop,"b1, ""main""",1,100.00,0.00,1.00,0.00,2026-11-01T00:00:00Z,,orphans',
      'group:default/a,component:default/a2,prod,shop,a2-db,1,10.00,0.00,0.10,0.00,,,orphans',
      'group:default/a,component:default/a1,prod,shop,a1-db,1,1.00,0.00,10.00,0.00,2026-11-20T00:00:00Z,,orphans',
      '(unowned),,prod,shop,old,1,5.00,0.00,0.50,0.00,,,orphans',
      '',
    ]);
  });

  it('defuses cells a spreadsheet would run as formulas (=, +, -, @, tab, carriage return), and leaves numbers numbers', () => {
    const hostile: FleetResponse = {
      ...FLEET,
      owners: [{ ...FLEET.owners[0], owner: "=cmd|' /C calc'!A0" }],
      items: [
        {
          ...FLEET.items[0],
          owner: "=cmd|' /C calc'!A0",
          entityRef: '@SUM(A1:A9)',
          statefulSets: [
            {
              ...sts('-2+3+cmd', 1.5, 0.25, '2026-11-20T00:00:00Z'),
              cluster: '+HYPERLINK("https://evil.example","x")',
              namespace: '\tshop',
            },
            { ...sts('\rdb', 0, 0), cluster: 'prod' },
          ],
        },
      ],
      unowned: undefined,
    };

    const csv = fleetCsv(
      fleetGroups(hostile, { key: 'storage', descending: true }),
      undefined,
      'EUR',
    );

    expect(csv.split('\n').slice(1, 3)).toEqual([
      `"'=cmd|' /C calc'!A0","'@SUM(A1:A9)","'+HYPERLINK(""https://evil.example"",""x"")","'\tshop","'-2+3+cmd",1,1.50,0.00,0.25,0.00,2026-11-20T00:00:00Z,,orphans`,
      `"'=cmd|' /C calc'!A0","'@SUM(A1:A9)",prod,shop,"'\rdb",1,0.00,0.00,0.00,0.00,,,orphans`,
    ]);
  });

  it('has no cost columns without pricing, and no unowned rows when they are not shown', () => {
    const csv = fleetCsv(
      fleetGroups(FLEET, { key: 'storage', descending: true }),
      undefined,
      undefined,
    );
    expect(csv.split('\n')[0]).toBe(
      'owner,entity,cluster,namespace,statefulset,orphans,reclaimable_gib,retained_gib,first_seen_orphaned_at,shared_with,kind',
    );
    expect(csv).not.toContain('unowned');
    expect(csv.split('\n')[1]).toBe(
      'group:default/b,component:default/b1,prod,shop,"b1, ""main""",1,100.00,0.00,2026-11-01T00:00:00Z,,orphans',
    );
  });

  it('names the other claimants of a shared StatefulSet on each of its rows', () => {
    const shared = sts('search-index', 1, 0.25);
    const fleet: FleetResponse = {
      ...FLEET,
      items: [
        {
          ...FLEET.items[0],
          entityRef: 'component:default/borrowed',
          statefulSets: [
            { ...shared, sharedWith: ['component:default/search-index'] },
          ],
        },
        {
          ...FLEET.items[0],
          entityRef: 'component:default/search-index',
          statefulSets: [
            {
              ...shared,
              sharedWith: ['component:default/a', 'component:default/borrowed'],
            },
          ],
        },
      ],
      unowned: undefined,
    };
    const lines = fleetCsv(
      fleetGroups(fleet, { key: 'storage', descending: true }),
      undefined,
      undefined,
    ).split('\n');
    expect(lines.slice(1, 3).map(l => l.split(',').slice(1).join(','))).toEqual(
      [
        'component:default/borrowed,prod,shop,search-index,1,1.00,0.00,,component:default/search-index,orphans',
        'component:default/search-index,prod,shop,search-index,1,1.00,0.00,,component:default/a component:default/borrowed,orphans',
      ],
    );
  });
});
