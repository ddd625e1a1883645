import type {
  V1PersistentVolume,
  V1PersistentVolumeClaim,
  V1Pod,
  V1StatefulSet,
  V2HorizontalPodAutoscaler,
} from '@kubernetes/client-node';
import { hpaAsTheRuleReadsIt } from '../autoscaling';
import { KEEP_CLAIM_ANNOTATION } from 'backstage-plugin-pvc-pruner-common';
import {
  claimAsTheRuleReadsIt,
  classifyClaims,
  OrphanRuleInput,
  podAsTheRuleReadsIt,
  WATCH_CACHE_TRIMMERS,
} from './orphanRule';

const NS = 'shop';

function sts(
  name: string,
  spec: {
    replicas?: number;
    start?: number;
    templates?: string[];
    selector?: NonNullable<V1StatefulSet['spec']>['selector'];
  } = {},
): V1StatefulSet {
  return {
    metadata: { name, namespace: NS, uid: `uid-${name}` },
    spec: {
      replicas: spec.replicas ?? 2,
      ...(spec.start !== undefined ? { ordinals: { start: spec.start } } : {}),
      serviceName: name,
      selector: spec.selector ?? { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'c' }] },
      },
      volumeClaimTemplates: (spec.templates ?? ['data']).map(t => ({
        metadata: { name: t },
        spec: {
          accessModes: ['ReadWriteOnce'],
          resources: { requests: { storage: '10Gi' } },
        },
      })),
    },
  };
}

function claim(
  name: string,
  extra: {
    namespace?: string;
    volume?: string;
    deleting?: boolean;
    capacity?: string;
  } = {},
): V1PersistentVolumeClaim {
  return {
    metadata: {
      name,
      namespace: extra.namespace ?? NS,
      uid: `uid-${name}`,
      resourceVersion: '7',
      creationTimestamp: new Date('2026-01-01T00:00:00Z'),
      ...(extra.deleting
        ? {
            deletionTimestamp: new Date('2026-11-30T00:00:00Z'),
            finalizers: ['acc.example/backup-hold'],
          }
        : {}),
    },
    spec: {
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: '10Gi' } },
      storageClassName: 'standard',
      volumeName: extra.volume,
    },
    status: extra.volume
      ? { phase: 'Bound', capacity: { storage: extra.capacity ?? '10Gi' } }
      : { phase: 'Pending' },
  };
}

function pod(
  name: string,
  claims: string[],
  terminating = false,
  namespace = NS,
): V1Pod {
  return {
    metadata: {
      name,
      namespace,
      ...(terminating ? { deletionTimestamp: new Date() } : {}),
    },
    spec: {
      containers: [{ name: 'c' }],
      volumes: claims.map(c => ({
        name: c,
        persistentVolumeClaim: { claimName: c },
      })),
    },
  };
}

function pv(name: string, reclaimPolicy: string): V1PersistentVolume {
  return {
    metadata: { name },
    spec: { persistentVolumeReclaimPolicy: reclaimPolicy },
    status: { phase: 'Bound' },
  };
}

/** An autoscaling/v2 HorizontalPodAutoscaler scaling `target` (a StatefulSet of apps/v1 unless told) up to maxReplicas. */
function hpa(
  name: string,
  maxReplicas: unknown,
  target: {
    name: string;
    kind?: string;
    apiVersion?: string;
    namespace?: string;
  },
): V2HorizontalPodAutoscaler {
  return {
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata: {
      name,
      namespace: target.namespace ?? NS,
      uid: `uid-${name}`,
      annotations: { note: 'not read' },
    },
    spec: {
      scaleTargetRef: {
        apiVersion: target.apiVersion ?? 'apps/v1',
        kind: target.kind ?? 'StatefulSet',
        name: target.name,
      },
      minReplicas: 1,
      maxReplicas: maxReplicas as number,
      metrics: [
        {
          type: 'Resource',
          resource: {
            name: 'cpu',
            target: { type: 'Utilization', averageUtilization: 70 },
          },
        },
      ],
    },
  };
}

function run(input: Partial<OrphanRuleInput> & { statefulSet: V1StatefulSet }) {
  return classifyClaims({
    claims: [],
    pods: [],
    volumes: new Map(),
    autoscalers: [],
    neighbours: [input.statefulSet],
    ...input,
  });
}

const names = (list: Array<{ name: string }>) => list.map(c => c.name);

/** pvcPruner.pausedStatefulSets: offer, for the tests of rules that a paused StatefulSet's claims would otherwise never reach. */
const OFFER_PAUSED = { pausedStatefulSets: 'offer' } as const;

describe('classifyClaims (the orphan rule)', () => {
  it('finds claims above the replica count and keeps those the StatefulSet runs', () => {
    const result = run({
      statefulSet: sts('web', { replicas: 2 }),
      claims: ['data-web-0', 'data-web-1', 'data-web-2', 'data-web-3'].map(n =>
        claim(n),
      ),
    });
    expect(names(result.orphans)).toEqual(['data-web-2', 'data-web-3']);
    expect(result.inUse).toEqual([{ template: 'data', ordinals: [0, 1] }]);
    expect(result.kept).toEqual([]);
    expect(result.ordinals).toEqual({ start: 0, end: 2 });
  });

  // Seed defect: prefix matching took data-web-2-0, a claim of StatefulSet web-2.
  it('never takes another StatefulSet’s claim whose name shares the prefix', () => {
    const result = run({
      statefulSet: sts('web', { replicas: 1 }),
      claims: [
        claim('data-web-2-0'),
        claim('data-web-2-1'),
        claim('data-web-5'),
      ],
    });
    expect(names(result.orphans)).toEqual(['data-web-5']);
    expect(
      result.kept.filter(k => k.reason === 'not-an-ordinal').map(k => k.name),
    ).toEqual(['data-web-2-0', 'data-web-2-1']);
  });

  // Seed defect: any suffix counted, not just decimal ordinals.
  it.each([
    'data-web-backup',
    'data-web-03',
    'data-web-',
    'data-web-1e3',
    'data-web-+4',
    'data-web- 4',
    'data-web-٣',
  ])('keeps %j: the suffix is not a canonical decimal ordinal', name => {
    const result = run({
      statefulSet: sts('web', { replicas: 1 }),
      claims: [claim(name)],
    });
    expect(result.orphans).toEqual([]);
    expect(result.kept).toEqual([
      expect.objectContaining({ name, reason: 'not-an-ordinal' }),
    ]);
  });

  // Seed defect: lexical sort put -10 before -2.
  it('orders orphans by numeric ordinal, lowest first', () => {
    const result = run({
      statefulSet: sts('web', { replicas: 1 }),
      claims: ['data-web-10', 'data-web-2', 'data-web-11', 'data-web-3'].map(
        n => claim(n),
      ),
    });
    expect(result.orphans.map(o => o.ordinal)).toEqual([2, 3, 10, 11]);
  });

  // Seed defect: trusting replicas alone. Pods above the new size still terminate with the claim mounted.
  it('keeps a claim that a terminating pod still mounts', () => {
    const result = run({
      statefulSet: sts('web', { replicas: 2 }),
      claims: [claim('data-web-2'), claim('data-web-3')],
      pods: [pod('web-3', ['data-web-3'], true)],
    });
    expect(names(result.orphans)).toEqual(['data-web-2']);
    expect(result.kept).toEqual([
      expect.objectContaining({
        name: 'data-web-3',
        reason: 'mounted-by-pod',
        pods: [{ name: 'web-3', terminating: true }],
      }),
    ]);
  });

  it('keeps a claim that any pod references, even one the StatefulSet does not own', () => {
    const result = run({
      statefulSet: sts('web', { replicas: 0 }),
      ...OFFER_PAUSED,
      claims: [claim('data-web-0')],
      pods: [pod('debug-shell', ['data-web-0'])],
    });
    expect(result.orphans).toEqual([]);
    expect(result.kept[0]).toMatchObject({
      reason: 'mounted-by-pod',
      pods: [{ name: 'debug-shell', terminating: false }],
    });
  });

  it('keeps a claim a pod references through a generic ephemeral volume, which Kubernetes names <pod>-<volume>, as the pod is read', () => {
    const ephemeralUser: V1Pod = {
      metadata: { name: 'data-orders-db', namespace: NS },
      spec: {
        containers: [],
        volumes: [
          {
            name: '3',
            ephemeral: {
              volumeClaimTemplate: {
                spec: { accessModes: ['ReadWriteOnce'] },
              },
            },
          },
        ],
      },
    };
    const result = run({
      // data-orders-db-3 also reads as ordinal 3 of db's template data-orders.
      statefulSet: sts('db', { replicas: 2, templates: ['data-orders'] }),
      claims: [claim('data-orders-db-3')],
      pods: [podAsTheRuleReadsIt(ephemeralUser)],
    });
    expect(result.orphans).toEqual([]);
    expect(result.kept[0]).toMatchObject({
      name: 'data-orders-db-3',
      reason: 'mounted-by-pod',
      pods: [{ name: 'data-orders-db', terminating: false }],
    });
  });

  it('ignores pods in other namespaces', () => {
    const result = run({
      statefulSet: sts('web', { replicas: 0 }),
      ...OFFER_PAUSED,
      claims: [claim('data-web-0')],
      pods: [pod('web-0', ['data-web-0'], false, 'other')],
    });
    expect(names(result.orphans)).toEqual(['data-web-0']);
  });

  // Kubernetes ≥ 1.26: spec.ordinals.start decides the ordinals as much as replicas does.
  it('honours spec.ordinals.start: ordinals below the start are orphans too', () => {
    const result = run({
      statefulSet: sts('web', { replicas: 2, start: 3 }),
      claims: [
        'data-web-0',
        'data-web-2',
        'data-web-3',
        'data-web-4',
        'data-web-5',
      ].map(n => claim(n)),
    });
    expect(result.ordinals).toEqual({ start: 3, end: 5 });
    expect(result.inUse).toEqual([{ template: 'data', ordinals: [3, 4] }]);
    expect(names(result.orphans)).toEqual([
      'data-web-0',
      'data-web-2',
      'data-web-5',
    ]);
    expect(
      result.orphans.find(o => o.ordinal === 5)?.reattachesAtReplicas,
    ).toBe(3);
    expect(
      result.orphans.find(o => o.ordinal === 0)?.reattachesAtReplicas,
    ).toBe(-2);
  });

  it('says at which replica count the controller would reattach an orphan', () => {
    const result = run({
      statefulSet: sts('web', { replicas: 2 }),
      claims: [claim('data-web-4')],
    });
    expect(result.orphans[0].reattachesAtReplicas).toBe(5);
  });

  it('runs no ordinals at 0 replicas, so with pausedStatefulSets: offer every unmounted claim is an orphan', () => {
    const result = run({
      statefulSet: sts('web', { replicas: 0 }),
      ...OFFER_PAUSED,
      claims: [claim('data-web-0')],
    });
    expect(names(result.orphans)).toEqual(['data-web-0']);
  });

  // Seed defect: listing by selector missed claims without the matchLabels (hand-made, or matchExpressions selectors).
  it('finds claims by name whatever their labels and whatever the selector', () => {
    const withExpressions = sts('web', {
      replicas: 1,
      selector: {
        matchExpressions: [{ key: 'app', operator: 'In', values: ['web'] }],
      },
    });
    const unlabelled = claim('data-web-3');
    delete unlabelled.metadata!.labels;
    expect(
      names(
        run({ statefulSet: withExpressions, claims: [unlabelled] }).orphans,
      ),
    ).toEqual(['data-web-3']);
  });

  it('only considers claims in the StatefulSet’s namespace', () => {
    const result = run({
      statefulSet: sts('web', { replicas: 0 }),
      claims: [claim('data-web-0', { namespace: 'other' })],
    });
    expect(result.orphans).toEqual([]);
    expect(result.kept).toEqual([]);
  });

  it('ignores claims of templates the StatefulSet does not have', () => {
    const result = run({
      statefulSet: sts('web', { replicas: 0, templates: ['data'] }),
      claims: [claim('logs-web-0'), claim('web-0')],
    });
    expect(result.orphans).toEqual([]);
    expect(result.kept).toEqual([]);
  });

  it('handles several templates, and a template name that contains the StatefulSet’s name', () => {
    const result = run({
      statefulSet: sts('web', { replicas: 1, templates: ['data', 'data-web'] }),
      claims: [
        claim('data-web-1'),
        claim('data-web-web-1'),
        claim('data-web-web-0'),
      ],
    });
    expect(result.orphans.map(o => [o.name, o.template, o.ordinal])).toEqual([
      ['data-web-1', 'data', 1],
      ['data-web-web-1', 'data-web', 1],
    ]);
    expect(result.inUse).toEqual([{ template: 'data-web', ordinals: [0] }]);
    expect(result.kept).toEqual([]);
  });

  it('groups a template named twice in the spec once', () => {
    const result = run({
      statefulSet: sts('web', { replicas: 2, templates: ['data', 'data'] }),
      claims: [claim('data-web-0'), claim('data-web-1')],
    });
    expect(result.inUse).toEqual([{ template: 'data', ordinals: [0, 1] }]);
  });

  it('groups the claims of running ordinals per template, in the spec’s order, ordinals ascending', () => {
    const result = run({
      statefulSet: sts('web', { replicas: 12, templates: ['logs', 'data'] }),
      claims: ['data-web-10', 'data-web-2', 'logs-web-0', 'data-web-0'].map(n =>
        claim(n),
      ),
    });
    expect(result.inUse).toEqual([
      { template: 'logs', ordinals: [0] },
      { template: 'data', ordinals: [0, 2, 10] },
    ]);
    expect(result.orphans).toEqual([]);
  });

  it('reports size, volume and reclaim policy, and flags Retain volumes apart from reclaimable capacity', () => {
    const result = run({
      statefulSet: sts('web', { replicas: 0 }),
      ...OFFER_PAUSED,
      claims: [
        claim('data-web-0', { volume: 'pv-a', capacity: '20Gi' }),
        claim('data-web-1', { volume: 'pv-b' }),
        claim('data-web-2'),
      ],
      volumes: new Map([
        ['pv-a', pv('pv-a', 'Delete')],
        ['pv-b', pv('pv-b', 'Retain')],
      ]),
    });
    const [a, b, c] = result.orphans;
    expect(a).toMatchObject({
      uid: 'uid-data-web-0',
      resourceVersion: '7',
      template: 'data',
      phase: 'Bound',
      requested: '10Gi',
      requestedBytes: 10 * 2 ** 30,
      capacity: '20Gi',
      capacityBytes: 20 * 2 ** 30,
      storageClassName: 'standard',
      volume: {
        name: 'pv-a',
        reclaimPolicy: 'Delete',
        phase: 'Bound',
        retained: false,
      },
      createdAt: '2026-01-01T00:00:00.000Z',
    });
    expect(b.volume).toEqual({
      name: 'pv-b',
      reclaimPolicy: 'Retain',
      phase: 'Bound',
      retained: true,
    });
    expect(c.volume).toBeUndefined();
    expect(result.reclaimableBytes).toBe(20 * 2 ** 30 + 10 * 2 ** 30);
    expect(result.retainedBytes).toBe(10 * 2 ** 30);
  });

  it('keeps a claim whose deletion is already under way as terminating, naming what holds it, and offers none of its bytes', () => {
    const result = run({
      statefulSet: sts('web', { replicas: 0 }),
      ...OFFER_PAUSED,
      claims: [
        claim('data-web-0', { deleting: true, volume: 'pv-0' }),
        claim('data-web-1', { volume: 'pv-1' }),
      ],
    });
    expect(result.orphans.map(o => o.name)).toEqual(['data-web-1']);
    expect(result.kept).toEqual([
      {
        name: 'data-web-0',
        uid: 'uid-data-web-0',
        template: 'data',
        ordinal: 0,
        reason: 'terminating',
        finalizers: ['acc.example/backup-hold'],
      },
    ]);
    expect(result.reclaimableBytes).toBe(10 * 2 ** 30);
  });

  it('reports the retention policy, defaulting to Retain', () => {
    const withPolicy = sts('web');
    withPolicy.spec!.persistentVolumeClaimRetentionPolicy = {
      whenScaled: 'Delete',
      whenDeleted: 'Retain',
    };
    expect(run({ statefulSet: withPolicy }).retentionPolicy).toEqual({
      whenScaled: 'Delete',
      whenDeleted: 'Retain',
    });
    expect(run({ statefulSet: sts('web') }).retentionPolicy).toEqual({
      whenScaled: 'Retain',
      whenDeleted: 'Retain',
    });
  });

  // The scan trims claims and pods as their list pages arrive; trimming must not change a verdict.
  it('classifies claims and pods trimmed to the fields it reads exactly as the full objects', () => {
    const web = sts('web', { replicas: 2, templates: ['data', 'logs'] });
    const input: OrphanRuleInput = {
      autoscalers: [],
      neighbours: [web],
      statefulSet: web,
      claims: [
        claim('data-web-0', { volume: 'pv-0' }),
        claim('logs-web-1'),
        claim('data-web-2', { volume: 'pv-2', capacity: '20Gi' }),
        claim('data-web-3', { volume: 'pv-3', deleting: true }),
        claim('data-web-4'),
        claim('data-web-backup'),
        claim('data-web-5', { namespace: 'other' }),
      ],
      pods: [
        pod('web-0', ['data-web-0']),
        pod('web-4', ['data-web-4'], true),
        pod('debug', ['data-web-2'], false, 'other'),
      ],
      volumes: new Map([
        ['pv-2', pv('pv-2', 'Retain')],
        ['pv-3', pv('pv-3', 'Delete')],
      ]),
    };
    const full = classifyClaims(input);
    expect(full.orphans.map(o => o.name)).toEqual(['data-web-2']);
    expect(full.kept.map(k => k.name)).toEqual([
      'data-web-3',
      'data-web-4',
      'data-web-backup',
    ]);
    expect(
      classifyClaims({
        ...input,
        claims: input.claims.map(claimAsTheRuleReadsIt),
        pods: input.pods.map(podAsTheRuleReadsIt),
      }),
    ).toEqual(full);
  });
});

describe('classifyClaims: the keep annotation', () => {
  const annotated = (name: string, value: string) => {
    const c = claim(name);
    c.metadata!.annotations = {
      [KEEP_CLAIM_ANNOTATION]: value,
      'example.com/notes': 'x'.repeat(10_000),
    };
    return c;
  };

  it('survives the watch cache, capped, and keeps an orphan from automatic pruning unless it says false', () => {
    const cached = [
      annotated('data-web-2', 'true'),
      annotated('data-web-3', 'False'),
      annotated('data-web-4', `ticket ${'y'.repeat(5000)}`),
      claim('data-web-5'),
    ].map(WATCH_CACHE_TRIMMERS.claim);
    expect(cached[0].metadata?.annotations).toEqual({
      [KEEP_CLAIM_ANNOTATION]: 'true',
    });
    expect(
      cached[2].metadata?.annotations?.[KEEP_CLAIM_ANNOTATION],
    ).toHaveLength(100);
    expect(cached[3].metadata?.annotations).toBeUndefined();

    const { orphans } = run({ statefulSet: sts('web'), claims: cached });
    expect(orphans.map(o => [o.name, o.keep])).toEqual([
      [
        'data-web-2',
        {
          source: 'annotation',
          reason: `annotated ${KEEP_CLAIM_ANNOTATION}=true`,
        },
      ],
      ['data-web-3', undefined],
      [
        'data-web-4',
        {
          source: 'annotation',
          reason: `annotated ${KEEP_CLAIM_ANNOTATION}=ticket ${'y'.repeat(93)}`,
        },
      ],
      ['data-web-5', undefined],
    ]);
  });
});

describe('classifyClaims: claims that will come back', () => {
  const claims = (...ordinals: number[]) =>
    ordinals.map(o => claim(`data-web-${o}`));
  const keptAs = (result: ReturnType<typeof run>) =>
    result.kept.map(k => [k.name, k.reason]);

  describe('a paused StatefulSet (0 replicas)', () => {
    it('keeps every claim it would reattach when scaled up, by default', () => {
      const result = run({
        statefulSet: sts('web', { replicas: 0 }),
        claims: claims(0, 1, 2),
      });
      expect(result.orphans).toEqual([]);
      expect(result.kept).toEqual(
        [0, 1, 2].map(ordinal => ({
          name: `data-web-${ordinal}`,
          uid: `uid-data-web-${ordinal}`,
          template: 'data',
          ordinal,
          reason: 'paused',
        })),
      );
      expect(result.reclaimableBytes).toBe(0);
    });

    it('offers them as orphans with pausedStatefulSets: offer', () => {
      const result = run({
        statefulSet: sts('web', { replicas: 0 }),
        ...OFFER_PAUSED,
        claims: claims(0, 1, 2),
      });
      expect(names(result.orphans)).toEqual([
        'data-web-0',
        'data-web-1',
        'data-web-2',
      ]);
      expect(result.kept).toEqual([]);
    });

    it('still names a mounting pod, a pending deletion or a name that is no ordinal first', () => {
      const result = run({
        statefulSet: sts('web', { replicas: 0 }),
        claims: [
          claim('data-web-0'),
          claim('data-web-1', { deleting: true }),
          claim('data-web-2'),
          claim('data-web-backup'),
        ],
        pods: [pod('debug-shell', ['data-web-2'])],
      });
      expect(keptAs(result)).toEqual([
        ['data-web-0', 'paused'],
        ['data-web-1', 'terminating'],
        ['data-web-2', 'mounted-by-pod'],
        ['data-web-backup', 'not-an-ordinal'],
      ]);
    });

    it('is not a StatefulSet whose spec.replicas is unset: that means 1 replica', () => {
      const unset = sts('web');
      delete unset.spec!.replicas;
      const result = run({ statefulSet: unset, claims: claims(0, 1) });
      expect(result.inUse).toEqual([{ template: 'data', ordinals: [0] }]);
      expect(names(result.orphans)).toEqual(['data-web-1']);
    });

    it.each([-1, '0', 'none', 0.5, Number.NaN])(
      'keeps the claims of a StatefulSet whose replicas is %p, which a broken API server may send',
      replicas => {
        const broken = sts('web');
        broken.spec!.replicas = replicas as number;
        const result = run({ statefulSet: broken, claims: claims(1, 2) });
        expect(result.orphans).toEqual([]);
        expect(result.kept.map(k => k.reason)).toEqual(['paused', 'paused']);
      },
    );
  });

  describe('a StatefulSet an autoscaler scales', () => {
    it('keeps the claims of ordinals below ordinals.start + maxReplicas, naming the HPA; the running ones stay in use, the ones beyond are orphans', () => {
      const result = run({
        statefulSet: sts('web', { replicas: 2 }),
        claims: claims(0, 1, 2, 5, 7, 8),
        autoscalers: [hpa('web-hpa', 8, { name: 'web' })],
      });
      expect(result.inUse).toEqual([{ template: 'data', ordinals: [0, 1] }]);
      expect(result.kept).toEqual(
        [2, 5, 7].map(ordinal => ({
          name: `data-web-${ordinal}`,
          uid: `uid-data-web-${ordinal}`,
          template: 'data',
          ordinal,
          reason: 'autoscaler-range',
          autoscaler: { name: 'web-hpa', maxReplicas: 8 },
        })),
      );
      expect(names(result.orphans)).toEqual(['data-web-8']);
    });

    it('counts the range from spec.ordinals.start, and keeps the ordinals below the start too', () => {
      const result = run({
        statefulSet: sts('web', { replicas: 2, start: 3 }),
        claims: claims(0, 3, 4, 5, 6, 7),
        autoscalers: [hpa('web-hpa', 4, { name: 'web' })],
      });
      expect(result.inUse).toEqual([{ template: 'data', ordinals: [3, 4] }]);
      expect(keptAs(result)).toEqual([
        ['data-web-0', 'autoscaler-range'],
        ['data-web-5', 'autoscaler-range'],
        ['data-web-6', 'autoscaler-range'],
      ]);
      expect(names(result.orphans)).toEqual(['data-web-7']);
    });

    it('takes the largest maxReplicas of several HPAs, and names that one', () => {
      const result = run({
        statefulSet: sts('web', { replicas: 1 }),
        claims: claims(1, 3, 5, 6),
        autoscalers: [
          hpa('keda-hpa-web', 4, { name: 'web' }),
          hpa('web-hpa', 6, { name: 'web' }),
          hpa('web-old', 2, { name: 'web' }),
        ],
      });
      expect(result.kept.map(k => [k.name, k.autoscaler])).toEqual([
        ['data-web-1', { name: 'web-hpa', maxReplicas: 6 }],
        ['data-web-3', { name: 'web-hpa', maxReplicas: 6 }],
        ['data-web-5', { name: 'web-hpa', maxReplicas: 6 }],
      ]);
      expect(names(result.orphans)).toEqual(['data-web-6']);
    });

    it.each<[string, V2HorizontalPodAutoscaler]>([
      ['another StatefulSet', hpa('api-hpa', 8, { name: 'api' })],
      [
        'a Deployment of the same name',
        hpa('web-hpa', 8, { name: 'web', kind: 'Deployment' }),
      ],
      [
        'a StatefulSet-kind of another API group',
        hpa('web-hpa', 8, { name: 'web', apiVersion: 'example.com/v1' }),
      ],
      [
        'a StatefulSet without an apiVersion (the HPA controller cannot resolve it)',
        hpa('web-hpa', 8, { name: 'web', apiVersion: '' }),
      ],
      [
        'a StatefulSet of that name in another namespace',
        hpa('web-hpa', 8, { name: 'web', namespace: 'other' }),
      ],
    ])('ignores an HPA that scales %s', (_what, other) => {
      const result = run({
        statefulSet: sts('web', { replicas: 2 }),
        claims: claims(2, 3),
        autoscalers: [other],
      });
      expect(names(result.orphans)).toEqual(['data-web-2', 'data-web-3']);
      expect(result.kept).toEqual([]);
    });

    it('counts an HPA that names the StatefulSet by another apps version, as the HPA controller resolves group and kind', () => {
      const result = run({
        statefulSet: sts('web', { replicas: 1 }),
        claims: claims(1),
        autoscalers: [
          hpa('web-hpa', 3, { name: 'web', apiVersion: 'apps/v1beta2' }),
        ],
      });
      expect(keptAs(result)).toEqual([['data-web-1', 'autoscaler-range']]);
    });

    it.each([0, -3, 2.5, '8', 2 ** 31, 1e300, Infinity, Number.NaN, null, {}])(
      'keeps every claim it could bring back when maxReplicas is %p, which is no replica count',
      maxReplicas => {
        const result = run({
          statefulSet: sts('web', { replicas: 1 }),
          claims: claims(0, 1, 40, 1000000),
          autoscalers: [
            hpa('web-hpa', 3, { name: 'web' }),
            hpa('broken', maxReplicas, { name: 'web' }),
          ],
        });
        expect(result.orphans).toEqual([]);
        expect(result.inUse).toEqual([{ template: 'data', ordinals: [0] }]);
        expect(result.kept.map(k => [k.ordinal, k.autoscaler])).toEqual([
          [1, { name: 'broken' }],
          [40, { name: 'broken' }],
          [1000000, { name: 'broken' }],
        ]);
      },
    );

    it('names an HPA in no more than the 253 characters a name may have, whatever a broken API server sends', () => {
      const result = run({
        statefulSet: sts('web', { replicas: 1 }),
        claims: claims(1),
        autoscalers: [hpa('x'.repeat(100_000), 3, { name: 'web' })],
      });
      expect(result.kept[0].autoscaler?.name).toBe('x'.repeat(253));
    });

    it('keeps the largest valid maxReplicas, 2^31-1, without overflow', () => {
      const result = run({
        statefulSet: sts('web', { replicas: 1, start: 2 ** 31 - 1 }),
        claims: [
          claim(`data-web-${2 ** 32 - 3}`),
          claim(`data-web-${2 ** 32 - 2}`),
        ],
        autoscalers: [hpa('web-hpa', 2 ** 31 - 1, { name: 'web' })],
      });
      expect(keptAs(result)).toEqual([
        [`data-web-${2 ** 32 - 3}`, 'autoscaler-range'],
      ]);
      expect(result.orphans.map(o => o.ordinal)).toEqual([2 ** 32 - 2]);
    });

    it("keeps every claim it could bring back when the namespace's HPAs could not be read, saying why", () => {
      const result = run({
        statefulSet: sts('web', { replicas: 1 }),
        claims: claims(0, 1, 9),
        autoscalers: {
          unreadable: 'cluster "demo" refused list: 403 Forbidden',
        },
      });
      expect(result.orphans).toEqual([]);
      expect(result.inUse).toEqual([{ template: 'data', ordinals: [0] }]);
      expect(
        result.kept.map(k => [k.ordinal, k.reason, k.autoscalersError]),
      ).toEqual([
        [
          1,
          'autoscalers-unreadable',
          'cluster "demo" refused list: 403 Forbidden',
        ],
        [
          9,
          'autoscalers-unreadable',
          'cluster "demo" refused list: 403 Forbidden',
        ],
      ]);
    });

    it('says paused rather than autoscaled for a paused StatefulSet, and keeps the HPA range when paused claims are offered', () => {
      const autoscalers = [hpa('web-hpa', 2, { name: 'web' })];
      const paused = sts('web', { replicas: 0 });
      expect(
        keptAs(run({ statefulSet: paused, claims: claims(0, 3), autoscalers })),
      ).toEqual([
        ['data-web-0', 'paused'],
        ['data-web-3', 'paused'],
      ]);
      const offered = run({
        statefulSet: paused,
        claims: claims(0, 3),
        autoscalers,
        ...OFFER_PAUSED,
      });
      expect(keptAs(offered)).toEqual([['data-web-0', 'autoscaler-range']]);
      expect(names(offered.orphans)).toEqual(['data-web-3']);
    });

    it('classifies HPAs trimmed to the fields it reads exactly as the full objects', () => {
      const input = {
        statefulSet: sts('web', { replicas: 1 }),
        claims: claims(1, 2, 3),
        autoscalers: [
          hpa('web-hpa', 2, { name: 'web' }),
          hpa('web-deploy', 9, { name: 'web', kind: 'Deployment' }),
        ],
      };
      const full = run(input);
      expect(keptAs(full)).toEqual([['data-web-1', 'autoscaler-range']]);
      expect(
        run({
          ...input,
          autoscalers: input.autoscalers.map(hpaAsTheRuleReadsIt),
        }),
      ).toEqual(full);
    });
  });
});

describe('classifyClaims: a claim whose name fits two StatefulSets', () => {
  // data-ledger-db-2 is ordinal 2 of ledger-db's template data, and of db's template data-ledger.
  const ledger = sts('ledger-db', { replicas: 2, templates: ['data'] });
  const db = sts('db', { replicas: 1, templates: ['data-ledger'] });
  const claims = [claim('data-ledger-db-2'), claim('data-ledger-db-3')];

  it('is offered by neither, each naming the other (found in review: anyone who may create a StatefulSet in the namespace could otherwise claim another’s claims by name)', () => {
    for (const [mine, other, template] of [
      [ledger, 'db', 'data-ledger'],
      [db, 'ledger-db', 'data'],
    ] as const) {
      const report = run({
        statefulSet: mine,
        neighbours: [ledger, db],
        claims,
      });
      expect(report.orphans).toEqual([]);
      expect(report.kept).toEqual([
        expect.objectContaining({
          name: 'data-ledger-db-2',
          reason: 'name-also-fits',
          alsoNamedBy: [{ statefulSet: other, template }],
        }),
        expect.objectContaining({
          name: 'data-ledger-db-3',
          reason: 'name-also-fits',
        }),
      ]);
    }
  });

  it('is an orphan as before when no other StatefulSet of the namespace fits it, siblings such as web and web-2 included', () => {
    expect(
      names(run({ statefulSet: ledger, neighbours: [ledger], claims }).orphans),
    ).toEqual(['data-ledger-db-2', 'data-ledger-db-3']);
    const web = sts('web', { replicas: 1 });
    const web2 = sts('web-2', { replicas: 1 });
    const report = run({
      statefulSet: web2,
      neighbours: [web, web2],
      claims: [claim('data-web-2-3')],
    });
    expect(names(report.orphans)).toEqual(['data-web-2-3']);
  });
});
