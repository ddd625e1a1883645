import type { ClusterCache, ClusterCaches, KubeGateways } from '../kubernetes';
import { ReferencedClaimUids } from './ReferencedClaimUids';

/** A ready cache holding these claims and volumes, as ClusterCache's stores hand them out. */
const readyCache = (claimUids: string[], claimRefUids: string[]) =>
  ({
    claims: { all: () => claimUids.map(uid => ({ metadata: { uid } })) },
    volumes: {
      all: () => claimRefUids.map(uid => ({ spec: { claimRef: { uid } } })),
    },
  } as unknown as ClusterCache);

describe('ReferencedClaimUids', () => {
  it('names the claims that exist and those volumes still name, per cluster with a ready cache; nothing can be told of a configured cluster without one, and a cluster no longer configured references nothing', async () => {
    const referenced = await new ReferencedClaimUids({
      gateways: {
        list: async () => [{ name: 'demo' }, { name: 'unready' }],
      } as unknown as KubeGateways,
      caches: {
        readyCaches: () => [
          { cluster: 'demo', cache: readyCache(['claim-1'], ['released-1']) },
        ],
      } as unknown as ClusterCaches,
    }).snapshot();
    expect([...referenced('demo')!].sort()).toEqual(['claim-1', 'released-1']);
    expect(referenced('unready')).toBeUndefined();
    expect([...referenced('removed')!]).toEqual([]);
  });
});
