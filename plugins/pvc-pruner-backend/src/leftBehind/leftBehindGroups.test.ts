import type {
  V1OwnerReference,
  V1PersistentVolumeClaim,
  V1Pod,
  V1StatefulSet,
} from '@kubernetes/client-node';
import type { ClaimLineage } from '../lineage';
import { claimWithLabels, podAsTheRuleReadsIt } from '../orphans/orphanRule';
import { FoundGroup, leftBehindIn, LeftBehindInput } from './leftBehindGroups';
import { claimNameParses } from './leftBehindRule';

const NS = 'shop';
const LABELS = { 'backstage.io/kubernetes-id': 'orders' };

function claim(
  name: string,
  options: {
    uid?: string;
    labels?: Record<string, string>;
    deleting?: boolean;
    owners?: V1OwnerReference[];
  } = {},
): V1PersistentVolumeClaim {
  return {
    metadata: {
      name,
      namespace: NS,
      uid: options.uid ?? `uid-${name}`,
      resourceVersion: '1',
      labels: options.labels ?? LABELS,
      ...(options.owners ? { ownerReferences: options.owners } : {}),
      ...(options.deleting
        ? {
            deletionTimestamp: new Date(),
            finalizers: ['kubernetes.io/pvc-protection'],
          }
        : {}),
    },
    spec: { resources: { requests: { storage: '1Gi' } } },
  };
}

function statefulSet(
  name: string,
  uid = `sts-${name}`,
  replicas = 1,
): V1StatefulSet {
  return {
    metadata: { name, namespace: NS, uid },
    spec: {
      replicas,
      selector: {},
      serviceName: name,
      template: {},
      volumeClaimTemplates: [{ metadata: { name: 'data' } }],
    },
  };
}

function pod(claimName: string): V1Pod {
  return {
    metadata: { name: `pod-of-${claimName}`, namespace: NS },
    spec: {
      containers: [],
      volumes: [{ name: 'v', persistentVolumeClaim: { claimName } }],
    },
  };
}

/** Pod data-orders-db with generic ephemeral volume 3: Kubernetes names its claim data-orders-db-3. */
const ephemeralVolumeUser = podAsTheRuleReadsIt({
  metadata: { name: 'data-orders-db', namespace: NS },
  spec: {
    containers: [],
    volumes: [{ name: '3', ephemeral: { volumeClaimTemplate: { spec: {} } } }],
  },
});

function lineage(
  claimName: string,
  overrides: Partial<ClaimLineage> = {},
): ClaimLineage {
  const [, sts, ordinal] = claimName.match(/^data-(.*)-(\d+)$/)!;
  return {
    cluster: 'prod',
    namespace: NS,
    claimUid: `uid-${claimName}`,
    claimName,
    statefulSet: { name: sts, uid: `deleted-${sts}` },
    template: 'data',
    ordinal: Number(ordinal),
    claimants: ['component:default/orders'],
    claimantUids: { 'component:default/orders': 'uid-orders' },
    claimantsCrowded: false,
    lastSeenAt: '2026-12-03T10:00:00.000Z',
    ...overrides,
  };
}

/** The orders entity's selector, as ClaimantIndex would match it. */
const byLabels = (labels: Record<string, string>) =>
  labels['backstage.io/kubernetes-id'] === 'orders'
    ? ['component:default/orders']
    : [];

function find(overrides: Partial<LeftBehindInput>): FoundGroup[] {
  const claims = overrides.claims ?? [claim('data-orders-db-3')];
  return leftBehindIn({
    namespace: NS,
    claims,
    pods: [],
    statefulSets: [],
    autoscalers: [],
    claimantsByLabels: byLabels,
    unverifiedOf: () => [],
    ...overrides,
    lineage:
      overrides.lineage ??
      new Map(claims.map(c => [c.metadata!.uid!, lineage(c.metadata!.name!)])),
  });
}

const names = (groups: FoundGroup[]) =>
  groups.flatMap(g => g.report.orphans.map(o => o.name));

describe('leftBehindIn, with lineage', () => {
  it('finds a claim whose lineage names a deleted StatefulSet, under it', () => {
    const [group, ...rest] = find({});
    expect(rest).toEqual([]);
    expect(group).toMatchObject({
      namespace: NS,
      statefulSet: { name: 'orders-db', uid: 'deleted-orders-db' },
      evidence: 'lineage',
      lastSeenAt: '2026-12-03T10:00:00.000Z',
      claimants: ['component:default/orders'],
      crowded: false,
    });
    expect(names([group])).toEqual(['data-orders-db-3']);
  });

  it.each<[string, Partial<LeftBehindInput>]>([
    [
      'its StatefulSet (that uid) still exists',
      { statefulSets: [statefulSet('orders-db', 'deleted-orders-db', 1)] },
    ],
    [
      'a StatefulSet of that name exists again (judged by the orphan rule instead)',
      { statefulSets: [statefulSet('orders-db', 'new-uid', 5)] },
    ],
    [
      'a StatefulSet of that name exists again at 0 replicas',
      { statefulSets: [statefulSet('orders-db', 'new-uid', 0)] },
    ],
    ['a pod references it', { pods: [pod('data-orders-db-3')] }],
    [
      'a pod references it through a generic ephemeral volume (pod data-orders-db, volume 3)',
      {
        pods: [ephemeralVolumeUser],
      },
    ],
    [
      'it is being deleted',
      { claims: [claim('data-orders-db-3', { deleting: true })] },
    ],
    [
      'another StatefulSet of the namespace names it (template data-orders of db)',
      {
        statefulSets: [
          {
            ...statefulSet('db'),
            spec: {
              ...statefulSet('db').spec!,
              volumeClaimTemplates: [{ metadata: { name: 'data-orders' } }],
            },
          },
        ],
      },
    ],
    [
      'its lineage is of another namespace',
      {
        lineage: new Map([
          [
            'uid-data-orders-db-3',
            lineage('data-orders-db-3', { namespace: 'elsewhere' }),
          ],
        ]),
      },
    ],
    [
      'its lineage names another claim (the uid was recorded under another name)',
      {
        lineage: new Map([
          [
            'uid-data-orders-db-3',
            lineage('data-orders-db-4', { claimUid: 'uid-data-orders-db-3' }),
          ],
        ]),
      },
    ],
  ])('keeps the claim out when %s', (_, overrides) => {
    expect(names(find(overrides))).toEqual([]);
  });

  it('unites the recorded claimants with those whose selectors match the labels now', () => {
    const [group] = find({
      claimantsByLabels: () => ['component:default/catch-all'],
    });
    expect(group.claimants).toEqual([
      'component:default/catch-all',
      'component:default/orders',
    ]);
  });

  it('marks a group crowded when its recorded claimants were not all kept, or there are too many', () => {
    const claims = [claim('data-orders-db-3')];
    const crowdedLineage = new Map([
      [
        'uid-data-orders-db-3',
        lineage('data-orders-db-3', { claimantsCrowded: true }),
      ],
    ]);
    expect(find({ claims, lineage: crowdedLineage })[0].crowded).toBe(true);
    const many = Array.from(
      { length: 21 },
      (_, i) => `component:default/e${i}`,
    );
    const [group] = find({ claimantsByLabels: () => many });
    expect(group.crowded).toBe(true);
    expect(group.claimants.length).toBeLessThanOrEqual(21);
  });

  it('groups claims by the deleted StatefulSet uid, two incarnations apart', () => {
    const claims = [claim('data-orders-db-0'), claim('data-orders-db-1')];
    const groups = find({
      claims,
      lineage: new Map([
        ['uid-data-orders-db-0', lineage('data-orders-db-0')],
        [
          'uid-data-orders-db-1',
          lineage('data-orders-db-1', {
            statefulSet: { name: 'orders-db', uid: 'older' },
          }),
        ],
      ]),
    });
    expect(groups.map(g => g.statefulSet.uid).sort()).toEqual([
      'deleted-orders-db',
      'older',
    ]);
  });
});

describe('leftBehindIn, for a claim something owns', () => {
  const owner = (kind: string, apiVersion: string, uid: string) => ({
    kind,
    apiVersion,
    name: 'x',
    uid,
    controller: true,
  });
  /** As the finder and the watch cache read it. */
  const owned = (owners: V1OwnerReference[]) => [
    claimWithLabels(claim('data-orders-db-3', { owners })),
  ];

  describe.each([
    ['with lineage', undefined],
    ['without lineage', new Map()],
  ])('%s', (_, lineageOverride) => {
    const findOwned = (
      owners: V1OwnerReference[],
      overrides: Partial<LeftBehindInput> = {},
    ) =>
      names(
        find({
          claims: owned(owners),
          ...(lineageOverride ? { lineage: lineageOverride } : {}),
          ...overrides,
        }),
      );

    it.each([
      [
        'an operator’s resource (a hibernated CloudNativePG Cluster keeps its claims, unmounted)',
        owner('Cluster', 'postgresql.cnpg.io/v1', 'cluster-uid'),
      ],
      [
        'a pod (a generic ephemeral volume’s claim)',
        owner('Pod', 'v1', 'pod-uid'),
      ],
      [
        'a kind named StatefulSet of another API group',
        owner('StatefulSet', 'example.com/v1', 'sts-other'),
      ],
    ])('never offers a claim owned by %s', (_what, ownerRef) => {
      expect(findOwned([ownerRef])).toEqual([]);
    });

    it('never offers a claim owned by a StatefulSet that exists, whatever its name', () => {
      expect(
        findOwned([owner('StatefulSet', 'apps/v1', 'sts-other')], {
          statefulSets: [statefulSet('other', 'sts-other')],
        }),
      ).toEqual([]);
    });

    it('offers a claim owned only by a StatefulSet that no longer exists', () => {
      expect(
        findOwned([owner('StatefulSet', 'apps/v1', 'deleted-orders-db')]),
      ).toEqual(['data-orders-db-3']);
    });
  });
});

describe('leftBehindIn, without lineage', () => {
  const unrecorded = (overrides: Partial<LeftBehindInput> = {}) =>
    find({ lineage: new Map(), ...overrides });

  it('offers a claim by its name and labels, naming the reading used and the others', () => {
    const [group, ...rest] = unrecorded({
      claims: [claim('data-orders-db-3')],
    });
    expect(rest).toEqual([]);
    expect(group).toMatchObject({
      statefulSet: { name: 'orders-db' },
      evidence: 'name-and-labels',
      claimants: ['component:default/orders'],
      nameEvidence: {
        template: 'data',
        labels: LABELS,
        otherParses: [{ template: 'data-orders', statefulSet: 'db' }],
      },
    });
    expect(group.statefulSet.uid).toBeUndefined();
    expect(group.lastSeenAt).toBeUndefined();
  });

  it.each<[string, Partial<LeftBehindInput>]>([
    ['no entity selector matches its labels', { claimantsByLabels: () => [] }],
    [
      'it has no labels',
      { claims: [claim('data-orders-db-3', { labels: {} })] },
    ],
    [
      'a StatefulSet exists under the first reading',
      { statefulSets: [statefulSet('orders-db', 'x', 1)] },
    ],
    [
      'a StatefulSet exists under another reading',
      { statefulSets: [statefulSet('db', 'x', 1)] },
    ],
    ['a pod references it', { pods: [pod('data-orders-db-3')] }],
    [
      'a pod references it through a generic ephemeral volume (pod data-orders-db, volume 3)',
      {
        pods: [ephemeralVolumeUser],
      },
    ],
    [
      'it is being deleted',
      { claims: [claim('data-orders-db-3', { deleting: true })] },
    ],
    ['its name has no ordinal', { claims: [claim('data-orders-db-backup')] }],
  ])('keeps the claim out when %s', (_, overrides) => {
    expect(names(unrecorded(overrides))).toEqual([]);
  });

  it('caps the labels it names as evidence', () => {
    const labels = Object.fromEntries(
      Array.from({ length: 50 }, (_, i) => [`k${i}`, 'v']),
    );
    const [group] = unrecorded({
      claims: [claim('data-orders-db-3', { labels })],
      claimantsByLabels: () => ['component:default/orders'],
    });
    expect(Object.keys(group.nameEvidence!.labels)).toHaveLength(20);
  });
});

describe('claimNameParses', () => {
  it('reads every split of template and StatefulSet, shortest template first', () => {
    expect(claimNameParses('data-orders-db-3')).toEqual([
      { template: 'data', statefulSet: 'orders-db', ordinal: 3 },
      { template: 'data-orders', statefulSet: 'db', ordinal: 3 },
    ]);
  });

  it.each(['data-web-01', 'data-web', 'web-0', 'data--0', 'data-web-x'])(
    'reads nothing in %s that the controller could have named',
    name => {
      expect(claimNameParses(name)).toEqual([]);
    },
  );

  it('caps the readings of a name of many dashes', () => {
    expect(claimNameParses(`${'a-'.repeat(100)}0`).length).toBeLessThanOrEqual(
      20,
    );
  });
});
