import { StatefulSetOrphans } from 'backstage-plugin-pvc-pruner-common';
import { PriceList } from '../cost';
import { OrphanSighting, OrphanSightingStore } from '../database';
import { OrphanAnnotator } from './OrphanAnnotator';
import {
  orphanedClaim,
  statefulSetReport,
} from '../__testUtils__/orphanReports';

function report(orphanGiB: number[]): StatefulSetOrphans {
  return statefulSetReport(
    'shop',
    'orders-db',
    orphanGiB.map((gib, i) =>
      orphanedClaim('orders-db', i + 1, gib, { uid: `uid-${i + 1}` }),
    ),
    {
      uid: 'uid-orders-db',
      inUse: [{ template: 'data', ordinals: [0] }],
    },
  );
}

/** A store whose first sightings the test sets, as another replica's earlier sighting would. */
function sightingsAt(firstSeen: Record<string, string>) {
  const recorded: OrphanSighting[][] = [];
  const store = {
    record: async (sightings: OrphanSighting[]) => {
      recorded.push(sightings);
      return new Map(
        sightings.flatMap(s =>
          firstSeen[s.uid] ? [[s.uid, firstSeen[s.uid]] as const] : [],
        ),
      );
    },
    forgetInUse: async () => 0,
  } as unknown as OrphanSightingStore;
  return { store, recorded, firstSeen };
}

const prices = PriceList.of({ currency: 'EUR', defaultPricePerGiBMonth: 0.1 });

describe('OrphanAnnotator', () => {
  it('records every scan, and answers a report the cache hands out again with the same first sightings and costs', async () => {
    const sightings = sightingsAt({ 'uid-1': '2026-11-03T00:00:00.000Z' });
    const annotator = new OrphanAnnotator(sightings.store, prices);
    const cached = report([10]);
    const [first] = await annotator.annotate('prod', [cached]);
    const [again] = await annotator.annotate('prod', [cached]);
    expect(sightings.recorded).toHaveLength(2);
    expect(again).toBe(first);
    expect(again).toMatchObject({
      firstSeenOrphanedAt: '2026-11-03T00:00:00.000Z',
      reclaimableMonthlyCost: 1,
      orphans: [
        {
          name: 'data-orders-db-1',
          firstSeenOrphanedAt: '2026-11-03T00:00:00.000Z',
          monthlyCost: 1,
        },
      ],
    });
  });

  it('annotates anew when a first sighting differs from the one the report was annotated with', async () => {
    const sightings = sightingsAt({});
    const annotator = new OrphanAnnotator(sightings.store, prices);
    const cached = report([10]);
    const [unseen] = await annotator.annotate('prod', [cached]);
    expect(unseen.firstSeenOrphanedAt).toBeUndefined();
    sightings.firstSeen['uid-1'] = '2026-11-03T00:00:00.000Z';
    const [seen] = await annotator.annotate('prod', [cached]);
    expect(seen.firstSeenOrphanedAt).toBe('2026-11-03T00:00:00.000Z');
    expect(seen.orphans[0].firstSeenOrphanedAt).toBe(
      '2026-11-03T00:00:00.000Z',
    );
  });

  it('prices a new report of the same StatefulSet (the cluster changed) from its own orphans', async () => {
    const annotator = new OrphanAnnotator(sightingsAt({}).store, prices);
    await annotator.annotate('prod', [report([10])]);
    const [changed] = await annotator.annotate('prod', [report([10, 30])]);
    expect(changed.reclaimableMonthlyCost).toBeCloseTo(4);
    expect(changed.orphans.map(o => o.monthlyCost)).toEqual([1, 3]);
  });
});
