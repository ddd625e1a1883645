import type { ClaimLineage } from '../lineage';
import {
  catalogOf,
  componentEntity,
  uidsOf,
} from '../__testUtils__/catalogEntities';
import { VolumeAttribution } from './VolumeAttribution';

const ORDERS = 'component:default/orders';

const recordedFor = (
  claimants: string[],
  claimantUids = uidsOf(claimants),
) => ({
  lineageOf: async (_cluster: string, uids: string[]) =>
    new Map(
      uids.map(uid => [
        uid,
        {
          statefulSet: { name: 'orders-db', uid: 'sts-1' },
          claimants,
          claimantUids,
          claimantsCrowded: false,
        } as ClaimLineage,
      ]),
    ),
});

describe('VolumeAttribution', () => {
  it('traces a volume to its recorded claimants, verified against the catalog by uid', async () => {
    const traced = await new VolumeAttribution(
      recordedFor([ORDERS]),
      catalogOf([componentEntity('orders')]),
    ).of('demo', ['claim-1']);
    expect(traced.get('claim-1')).toMatchObject({
      claimants: [ORDERS],
      unverified: [],
    });
  });

  it('marks a claimant registered again under the same name after the original was removed, or one recorded without a uid', async () => {
    const reRegistered = await new VolumeAttribution(
      recordedFor([ORDERS]),
      catalogOf([componentEntity('orders', { uid: 'registered-later' })]),
    ).of('demo', ['claim-1']);
    expect(reRegistered.get('claim-1')!.unverified).toEqual([ORDERS]);
    const oldRow = await new VolumeAttribution(
      recordedFor([ORDERS], {}),
      catalogOf([componentEntity('orders')]),
    ).of('demo', ['claim-1']);
    expect(oldRow.get('claim-1')!.unverified).toEqual([ORDERS]);
  });

  it('checks the uids against a catalog read made now when asked (fresh), as a reclaim is authorized: the warm read may predate an entity registered again under the ref', async () => {
    const warmRead = catalogOf([componentEntity('orders')]);
    const now = catalogOf([
      componentEntity('orders', { owner: 'mallory', uid: 'registered-now' }),
    ]);
    const attribution = new VolumeAttribution(recordedFor([ORDERS]), {
      warm: warmRead.warm,
      fresh: now.fresh,
    });
    const traced = await attribution.of('demo', ['claim-1'], { fresh: true });
    expect(traced.get('claim-1')!.unverified).toEqual([ORDERS]);
  });
});
