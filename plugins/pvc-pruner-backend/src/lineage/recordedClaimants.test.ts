import { catalogOf, componentEntity } from '../__testUtils__/catalogEntities';
import { unverifiedClaimants } from './recordedClaimants';

const ORDERS = 'component:default/orders';
const LEDGER = 'component:default/ledger';

describe('unverifiedClaimants', () => {
  it('verifies a recorded claimant whose entity has the recorded uid today', async () => {
    const index = await catalogOf([componentEntity('orders')]).warm();
    expect(
      unverifiedClaimants(
        { claimants: [ORDERS], claimantUids: { [ORDERS]: 'uid-orders' } },
        index,
      ),
    ).toEqual([]);
  });

  it('does not verify one registered again under the same name (another uid), one gone from the catalog, or one recorded without a uid', async () => {
    const index = await catalogOf([
      componentEntity('orders', { uid: 'registered-later' }),
      componentEntity('ledger'),
    ]).warm();
    expect(
      unverifiedClaimants(
        {
          claimants: [ORDERS, 'component:default/gone', LEDGER],
          claimantUids: {
            [ORDERS]: 'uid-orders',
            'component:default/gone': 'uid-gone',
          },
        },
        index,
      ),
    ).toEqual([ORDERS, 'component:default/gone', LEDGER]);
  });
});
