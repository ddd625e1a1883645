import { memoryDatabase } from '../__testUtils__/memoryJobStore';
import { AnnouncementStore } from './AnnouncementStore';
import { AnnouncingPlanner, MAX_ANNOUNCED_CLAIMS } from './AnnouncingPlanner';
import type { AutoPrunePlan, PlannedClaim, PlannedGroup } from './types';

/* The announcing planner over a real (SQLite) store and a planner's fixed plan. */

const NOW = new Date('2026-12-01T08:00:00.000Z');
const DAY = 24 * 3600_000;
const LONG_AGO = '2026-11-01T00:00:00.000Z';

const claims = (sts: string, n: number): PlannedClaim[] =>
  Array.from({ length: n }, (_, ordinal) => ({
    name: `data-${sts}-${ordinal}`,
    uid: `${sts}-${ordinal}`,
    ordinal,
    bytes: 1,
    eligibleAt: LONG_AGO,
    retained: false,
  }));

function group(sts: string, eligible: PlannedClaim[]): PlannedGroup {
  const entityRef = `component:default/${sts}`;
  return {
    cluster: 'demo',
    namespace: 'shop',
    statefulSet: sts,
    through: {
      entity: {
        apiVersion: 'backstage.io/v1alpha1',
        kind: 'Component',
        metadata: { name: sts },
      },
      entityRef,
      labelSelector: `backstage.io/kubernetes-id=${sts}`,
    },
    claimants: [entityRef],
    graceMs: DAY,
    eligible,
    upcoming: [],
    kept: [],
  };
}

let close: () => Promise<void>;
let store: AnnouncementStore;

beforeEach(async () => {
  const memory = memoryDatabase();
  close = memory.close;
  store = await AnnouncementStore.create({
    database: memory.database,
    now: () => NOW,
  });
});

afterEach(() => close());

describe('AnnouncingPlanner', () => {
  it(`announces at most ${MAX_ANNOUNCED_CLAIMS} claims a run, in plan order, and leaves the rest out of the plan`, async () => {
    const plan: AutoPrunePlan = {
      considered: MAX_ANNOUNCED_CLAIMS + 1,
      groups: [
        group('orders', claims('orders', MAX_ANNOUNCED_CLAIMS - 1)),
        group('search', claims('search', 2)),
      ],
      clustersFailed: [],
    };
    const planned = await new AnnouncingPlanner({
      planning: { plan: async () => plan },
      announcements: store,
      notifyBeforeMs: 2 * DAY,
    }).plan();

    const [orders, search] = planned.groups;
    expect(orders.upcoming).toHaveLength(MAX_ANNOUNCED_CLAIMS - 1);
    expect(search.upcoming.map(c => c.name)).toEqual(['data-search-0']);
    expect(search.upcoming[0]).toMatchObject({
      eligibleAt: new Date(NOW.getTime() + 2 * DAY).toISOString(),
      newlyAnnounced: true,
    });
    expect(
      (await store.announcementsOf('demo', ['search-0', 'search-1']))
        .announcedAt,
    ).toEqual(new Map([['search-0', NOW.toISOString()]]));
  });
});
