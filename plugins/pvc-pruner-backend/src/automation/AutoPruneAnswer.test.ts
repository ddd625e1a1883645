import { ConfigReader } from '@backstage/config';
import type { Entity } from '@backstage/catalog-model';
import type { V1StatefulSet } from '@kubernetes/client-node';
import {
  AUTO_PRUNE_ANNOTATION,
  AutoPruneRun,
  KEEP_CLAIM_ANNOTATION,
  OrphanedPvc,
  OrphansResponse,
} from 'backstage-plugin-pvc-pruner-common';
import { catalogOf, componentEntity } from '../__testUtils__/catalogEntities';
import { memoryDatabase } from '../__testUtils__/memoryJobStore';
import {
  orphanedClaim,
  statefulSetReport,
} from '../__testUtils__/orphanReports';
import { workloadTargetOf } from '../orphans';
import { AutoPruneAnswer } from './AutoPruneAnswer';
import { readAutoPruneOptions } from './autoPruneOptions';
import { AnnouncementStore } from './AnnouncementStore';
import { ClaimKeepStore } from './ClaimKeepStore';

const DAY = 24 * 60 * 60_000;
const FIRST_SEEN = '2026-11-20T10:00:00.000Z';
const NOW = new Date('2026-12-01T08:00:00.000Z');

const optedIn = (grace: string, extra: Record<string, string> = {}) =>
  componentEntity('orders', {
    annotations: {
      'backstage.io/kubernetes-id': 'orders',
      [AUTO_PRUNE_ANNOTATION]: grace,
      ...extra,
    },
  });

/** A second claimant of orders-db, by a label selector, that has not opted in. */
const reporting = componentEntity('reporting', {
  annotations: { 'backstage.io/kubernetes-label-selector': 'app=orders' },
});

const ordersDb: V1StatefulSet = {
  metadata: {
    name: 'orders-db',
    namespace: 'shop',
    labels: { 'backstage.io/kubernetes-id': 'orders', app: 'orders' },
  },
};

let keeps: ClaimKeepStore;
let close: () => Promise<void>;

beforeEach(async () => {
  const memory = memoryDatabase();
  close = memory.close;
  keeps = await ClaimKeepStore.create({
    database: memory.database,
    now: () => NOW,
  });
});

afterEach(() => close());

function answerWith(options: {
  entity: Entity;
  catalog?: Entity[];
  config?: object;
  orphans: OrphanedPvc[];
  lastRun?: Partial<AutoPruneRun>;
  announcements?: AnnouncementStore;
}) {
  const service = new AutoPruneAnswer({
    options: readAutoPruneOptions(
      new ConfigReader({
        autoPrune: { enabled: true, minimumGrace: '1d', ...options.config },
      }),
    ),
    workloads: catalogOf(options.catalog ?? [options.entity]),
    keeps,
    announcements: options.announcements,
    snapshotsEnabled: true,
    schedule: {
      nextRunAt: async () => '2026-12-01T09:00:00.000Z',
      lastRun: async () => options.lastRun as AutoPruneRun | undefined,
    },
  });
  const found: OrphansResponse = {
    entityRef: 'component:default/orders',
    clusters: [
      {
        cluster: 'demo',
        ok: true,
        statefulSets: [statefulSetReport('shop', 'orders-db', options.orphans)],
      },
    ],
    totals: { orphans: 1, reclaimableBytes: 0, retainedBytes: 0 },
  };
  return async () => {
    const answering = service.forEntity(workloadTargetOf(options.entity));
    // As the finder does: it asks admission about every StatefulSet it found.
    await answering.admitting(async items =>
      items.map(() => ({
        claimants: [],
        refused: [],
        crowded: false,
        pruneNeeds: [],
      })),
    )([{ cluster: 'demo', statefulSet: ordersDb }]);
    return answering.answer(found);
  };
}

const orphan = (ordinal: number, extra: Partial<OrphanedPvc> = {}) =>
  orphanedClaim('orders-db', ordinal, 10, {
    firstSeenOrphanedAt: FIRST_SEEN,
    ...extra,
  });

const statefulSetOf = (answer: OrphansResponse) => {
  const [section] = answer.clusters;
  if (!section.ok) throw new Error('cluster failed');
  return section.statefulSets[0];
};

describe('AutoPruneAnswer', () => {
  it('says when each orphan of an automated StatefulSet becomes eligible: its first sighting plus the grace', async () => {
    const answer = await answerWith({
      entity: optedIn('7d'),
      orphans: [orphan(1), orphan(2, { firstSeenOrphanedAt: undefined })],
      lastRun: { startedAt: '2026-12-01T07:00:00.000Z' },
    })();
    expect(answer.autoPrune).toEqual({
      state: 'opted-in',
      annotation: AUTO_PRUNE_ANNOTATION,
      keepAnnotation: KEEP_CLAIM_ANNOTATION,
      value: '7d',
      graceMs: 7 * DAY,
      minimumGraceMs: DAY,
      notifyBeforeMs: 2 * DAY,
      snapshots: true,
      nextRunAt: '2026-12-01T09:00:00.000Z',
      lastRunAt: '2026-12-01T07:00:00.000Z',
    });
    const sts = statefulSetOf(answer);
    expect(sts.autoPrune).toEqual({ automated: true });
    expect(sts.orphans.map(o => o.eligibleAt)).toEqual([
      '2026-11-27T10:00:00.000Z',
      undefined,
    ]);
  });

  it('reports an annotation that does not parse, or is below the minimum grace, and automates nothing', async () => {
    for (const [value, problem] of [
      ['soon', /"soon" is not a grace period/],
      ['2h', /"2h" is shorter than the 1d this Backstage requires/],
    ] as const) {
      const answer = await answerWith({
        entity: optedIn(value),
        orphans: [orphan(1)],
      })();
      expect(answer.autoPrune).toMatchObject({ state: 'invalid', value });
      expect(answer.autoPrune?.problem).toMatch(problem);
      const sts = statefulSetOf(answer);
      expect(sts.autoPrune).toBeUndefined();
      expect(sts.orphans[0].eligibleAt).toBeUndefined();
    }
  });

  it('does not automate a StatefulSet another claimant has not opted into, and says why', async () => {
    const entity = optedIn('7d');
    const answer = await answerWith({
      entity,
      catalog: [entity, reporting],
      orphans: [orphan(1)],
    })();
    const sts = statefulSetOf(answer);
    expect(sts.autoPrune).toEqual({
      automated: false,
      reason: expect.stringContaining(
        'it is also claimed by component:default/reporting, which has not opted in',
      ),
    });
    expect(sts.orphans[0].eligibleAt).toBeUndefined();
  });

  it('shows a kept orphan with its keep and no eligibility; a card keep with an end is eligible once both have passed', async () => {
    const keptBy = 'user:default/alice';
    const keepOf = (uid: string, until?: string) =>
      keeps.keep({
        cluster: 'demo',
        namespace: 'shop',
        claimName: uid,
        claimUid: uid,
        entityRef: 'component:default/orders',
        reason: 'the November export',
        keptBy,
        ...(until ? { until } : {}),
      });
    const annotated = {
      source: 'annotation' as const,
      reason: `annotated ${KEEP_CLAIM_ANNOTATION}=true`,
    };
    await keepOf('uid-data-orders-db-1');
    await keepOf('uid-data-orders-db-2', '2026-12-24T00:00:00.000Z');
    await keepOf('uid-data-orders-db-4', '2026-12-24T00:00:00.000Z');
    const answer = await answerWith({
      entity: optedIn('7d'),
      orphans: [
        orphan(1),
        orphan(2),
        orphan(3, { keep: annotated }),
        orphan(4, { keep: annotated }),
      ],
    })();
    const [byCard, withEnd, byAnnotation, annotatedAndCardWithEnd] =
      statefulSetOf(answer).orphans;
    // The annotation keeps for good: a card keep with an end must not make it look eligible.
    expect(annotatedAndCardWithEnd.keep).toEqual(annotated);
    expect(annotatedAndCardWithEnd.eligibleAt).toBeUndefined();
    expect(byCard.keep).toMatchObject({ source: 'card', keptBy });
    expect(byCard.eligibleAt).toBeUndefined();
    expect(withEnd.eligibleAt).toBe('2026-12-24T00:00:00.000Z');
    expect(byAnnotation.keep).toEqual(annotated);
    expect(byAnnotation.eligibleAt).toBeUndefined();
  });

  it('says an orphan becomes eligible no earlier than notifyBefore after automatic pruning announced it (or would, now)', async () => {
    const memory = memoryDatabase();
    try {
      let clock = new Date(NOW.getTime() - DAY);
      const announcements = await AnnouncementStore.create({
        database: memory.database,
        now: () => clock,
      });
      await announcements.announce(
        [{ cluster: 'demo', uid: 'uid-data-orders-db-1' }],
        [],
      );
      clock = NOW;
      await keeps.keep({
        cluster: 'demo',
        namespace: 'shop',
        claimName: 'data-orders-db-4',
        claimUid: 'uid-data-orders-db-4',
        entityRef: 'component:default/orders',
        reason: 'the November export',
        keptBy: 'user:default/alice',
        until: '2026-12-10T00:00:00.000Z',
      });
      const answer = await answerWith({
        entity: optedIn('7d'),
        orphans: [
          orphan(1),
          orphan(2),
          orphan(3, { firstSeenOrphanedAt: '2026-11-30T10:00:00.000Z' }),
          orphan(4),
        ],
        announcements,
      })();
      expect(statefulSetOf(answer).orphans.map(o => o.eligibleAt)).toEqual([
        // Announced a day ago: two days (notifyBefore) after that.
        '2026-12-02T08:00:00.000Z',
        // Past its grace, never announced: two days from now at the earliest.
        '2026-12-03T08:00:00.000Z',
        // Its grace ends later than any notice needs.
        '2026-12-07T10:00:00.000Z',
        // Kept until the 10th: announced afresh once the keep ends.
        '2026-12-12T00:00:00.000Z',
      ]);
    } finally {
      await memory.close();
    }
  });

  it('says only that it is disabled when the platform has not enabled it, and leaves the reports as they were', async () => {
    const orphans = [orphan(1)];
    const answer = await answerWith({
      entity: optedIn('7d'),
      config: { enabled: false },
      orphans,
    })();
    expect(answer.autoPrune).toEqual({
      state: 'disabled',
      annotation: AUTO_PRUNE_ANNOTATION,
      keepAnnotation: KEEP_CLAIM_ANNOTATION,
      value: '7d',
    });
    expect(statefulSetOf(answer).orphans).toEqual(orphans);
  });
});
