import { mockCredentials, mockServices } from '@backstage/backend-test-utils';
import { AuthorizeResult } from '@backstage/plugin-permission-common';
import type { KubeObject, KubeSim } from 'kube-sim';
import { pvc } from 'kube-sim';
import type { ReclaimRequest } from 'backstage-plugin-pvc-pruner-common';
import { startShopSimulator } from '../__testUtils__/shopSimulator';
import { startMemoryJobStore } from '../__testUtils__/memoryJobStore';
import { releasedVolume } from '../__testUtils__/releasedVolume';
import { PruneJobStore } from '../database';
import { KubeGateway, KubeGateways } from '../kubernetes';
import { JobEvents, LeaseLock, VolumeFollower } from '../jobs';
import { leaseNameFor } from '../jobs/LeaseLock';
import { RunningJobLimits } from '../limits';
import type { ClaimLineage } from '../lineage';
import { ClaimantIndex, NamespaceOwners } from '../ownership';
import { ReclaimPermissions } from './ReclaimPermissions';
import {
  catalogOf,
  componentEntity,
  uidsOf,
} from '../__testUtils__/catalogEntities';
import { VolumeAttribution } from './VolumeAttribution';
import { reclaimLeaseName, VolumeReclaimJobs } from './VolumeReclaimJobs';
import { VolumeReclaimRunner } from './VolumeReclaimRunner';

/* The checks before a reclaim job is stored: against the simulator (no controllers), nothing may be patched when one fails. */

const ORDERS = 'component:default/orders';
const LEASES = 'coordination.k8s.io/leases';
const credentials = mockCredentials.user('user:default/alice');

let sim: KubeSim;
let gateway: KubeGateway;
let store: PruneJobStore;
let closeStore: () => Promise<void>;
let adopted: string[];

beforeEach(async () => {
  ({ sim, gateway } = await startShopSimulator());
  ({ store, close: closeStore } = await startMemoryJobStore());
  adopted = [];
});
afterEach(async () => {
  await closeStore();
  await sim.close();
});

function jobs(options: { deny?: string[] } = {}) {
  const permissions = mockServices.permissions.mock();
  permissions.authorize.mockImplementation(async requests =>
    requests.map(r => ({
      result: options.deny?.includes(r.permission.name)
        ? AuthorizeResult.DENY
        : AuthorizeResult.ALLOW,
    })),
  );
  const attribution = new VolumeAttribution(
    {
      lineageOf: async (_cluster, uids) =>
        new Map(
          uids.map(uid => [
            uid,
            {
              statefulSet: { name: 'orders-db', uid: 'sts-1' },
              claimants: [ORDERS],
              claimantUids: uidsOf([ORDERS]),
              claimantsCrowded: false,
            } as ClaimLineage,
          ]),
        ),
    },
    catalogOf([componentEntity('orders')]),
  );
  const events = new JobEvents(store);
  return new VolumeReclaimJobs({
    store,
    runner: new VolumeReclaimRunner(store, events, new VolumeFollower(100), {
      renewIntervalMs: 60_000,
    }),
    gateways: { for: async () => gateway } as unknown as KubeGateways,
    lock: new LeaseLock({
      leaseDurationSeconds: 30,
      holderPrefix: 'backstage-a',
      clock: store,
    }),
    limits: new RunningJobLimits(store, { perUser: 10, perStatefulSet: 3 }),
    // Stored and locked is what is judged here; the job is not run.
    jobs: { adopt: async id => void adopted.push(id) },
    attribution,
    permissions: new ReclaimPermissions(permissions),
    namespaceOwners: new NamespaceOwners(),
    workloads: { warm: async () => ({} as ClaimantIndex) },
    leaseNamespace: 'default',
  });
}

const requestFor = (
  volumes: KubeObject[],
  more: Partial<ReclaimRequest> = {},
): ReclaimRequest => ({
  cluster: 'demo',
  namespace: 'shop',
  entityRef: ORDERS,
  volumes: volumes.map(v => ({
    name: v.metadata.name,
    uid: v.metadata.uid,
    resourceVersion: v.metadata.resourceVersion,
    claimUid: v.spec.claimRef.uid,
  })),
  ...more,
});

const start = (request: ReclaimRequest, deny?: string[]) =>
  jobs({ deny }).start({
    request,
    credentials,
    reporter: { finished: () => {}, crashed: () => {} },
  });

async function expectNothingStarted() {
  expect(
    sim.requests().filter(r => r.method === 'PATCH' || r.method === 'POST'),
  ).toEqual([]);
  expect(adopted).toEqual([]);
  expect(await store.activeJobs()).toEqual([]);
}

describe('VolumeReclaimJobs.start', () => {
  it('stores a reclaim job holding the namespace’s reclaim Lease, and hands it to be run', async () => {
    const pv = releasedVolume(sim, 'pvc-a');
    const job = await start(requestFor([pv]));
    expect(job).toMatchObject({
      kind: 'reclaim',
      entityRef: ORDERS,
      namespace: 'shop',
      statefulSet: 'orders-db',
      pvcs: [{ name: 'pvc-a', uid: pv.metadata.uid }],
    });
    expect(adopted).toEqual([job.id]);
    expect(
      sim.store.get(LEASES, 'default', reclaimLeaseName('shop')),
    ).toBeDefined();
  });

  it.each([
    [
      'Bound again',
      (pv: KubeObject) => ({ ...pv, status: { phase: 'Bound' } }),
      'it is Bound, not Released to a claim',
    ],
    [
      'Released to another claim uid',
      (pv: KubeObject) => ({
        ...pv,
        spec: { ...pv.spec, claimRef: { ...pv.spec.claimRef, uid: 'other' } },
      }),
      'now Released to another claim (uid other)',
    ],
    [
      'changed since it was listed',
      (pv: KubeObject) => ({
        ...pv,
        metadata: { ...pv.metadata, labels: { touched: 'yes' } },
      }),
      'changed since it was listed',
    ],
  ])(
    'refuses a volume %s with 409, storing and patching nothing',
    async (_, change, why) => {
      const pv = releasedVolume(sim, 'pvc-a');
      sim.store.update('persistentvolumes', change(structuredClone(pv)));
      sim.clearRequests();
      await expect(start(requestFor([pv]))).rejects.toMatchObject({
        name: 'ConflictError',
        message: expect.stringContaining(why),
      });
      await expectNothingStarted();
    },
  );

  it('refuses a volume whose claim, that very uid, exists', async () => {
    const claim = sim.store.create(
      'persistentvolumeclaims',
      pvc('data-pvc-a', {}, 'shop'),
    );
    const pv = releasedVolume(sim, 'pvc-a');
    const pointing = structuredClone(pv);
    pointing.spec.claimRef.uid = claim.metadata.uid;
    const current = sim.store.update('persistentvolumes', pointing);
    sim.clearRequests();
    await expect(start(requestFor([current]))).rejects.toMatchObject({
      name: 'ConflictError',
      message: expect.stringContaining('its claim shop/data-pvc-a'),
    });
    await expectNothingStarted();
  });

  it.each([
    [
      'a statically provisioned volume',
      { provisionedBy: null },
      {},
      'statically provisioned',
    ],
    [
      'a volume named twice',
      {},
      { twice: true },
      'the same volume more than once',
    ],
    [
      'a namespace its claim is not in',
      {},
      { namespace: 'other' },
      'not other',
    ],
    [
      'an entity its claim did not belong to',
      {},
      { entityRef: 'component:default/cart' },
      'Not every volume',
    ],
  ])(
    'refuses %s with 400, storing and patching nothing',
    async (_, volume, more, why) => {
      const pv = releasedVolume(
        sim,
        'pvc-a',
        volume as { provisionedBy?: null },
      );
      sim.clearRequests();
      const { twice, ...rest } = more as {
        twice?: boolean;
      } & Partial<ReclaimRequest>;
      await expect(
        start(requestFor(twice ? [pv, pv] : [pv], rest)),
      ).rejects.toMatchObject({
        name: 'InputError',
        message: expect.stringContaining(why),
      });
      await expectNothingStarted();
    },
  );

  it('refuses a user without pvc-pruner.volumes.reclaim before taking the Lease', async () => {
    const pv = releasedVolume(sim, 'pvc-a');
    sim.clearRequests();
    await expect(
      start(requestFor([pv]), ['pvc-pruner.volumes.reclaim']),
    ).rejects.toMatchObject({ name: 'NotAllowedError' });
    await expectNothingStarted();
    expect(
      sim.store.get(LEASES, 'default', reclaimLeaseName('shop')),
    ).toBeUndefined();
  });
});

/* Security review (review-reclaim): each test below fails on ce28c74 and passes once the finding it names is fixed. */
describe('review: VolumeReclaimJobs.start', () => {
  it('refuses a volume that a re-created claim of the same name is waiting to bind (spec.volumeName names it)', async () => {
    // The usual recovery of a Retain volume: re-create the claim (or its
    // StatefulSet) pre-bound to the volume by spec.volumeName, then clear the
    // volume's claimRef.uid. Between those two steps the volume is still
    // Released to the old uid, and reclaiming it deletes the disk being recovered.
    const pv = releasedVolume(sim, 'pvc-a');
    sim.store.create(
      'persistentvolumeclaims',
      pvc('data-pvc-a', { volumeName: 'pvc-a' }, 'shop'),
    );
    sim.clearRequests();
    await expect(start(requestFor([pv]))).rejects.toMatchObject({
      name: 'ConflictError',
    });
    await expectNothingStarted();
  });

  it('says a busy namespace is being reclaimed, not that "StatefulSet shop/" is being pruned', async () => {
    const first = releasedVolume(sim, 'pvc-a');
    const second = releasedVolume(sim, 'pvc-b');
    await start(requestFor([first]));
    const refused = start(requestFor([second]));
    await expect(refused).rejects.toMatchObject({ name: 'ConflictError' });
    await expect(refused).rejects.not.toMatchObject({
      message: expect.stringContaining('StatefulSet shop/ is being pruned'),
    });
  });
});

describe('VolumeReclaimJobs.start, from the fleet page', () => {
  it('stores the entities the volumes were traced to, and goes through the sole one when the request names none (so the owner sees it in its history)', async () => {
    const pv = releasedVolume(sim, 'pvc-a');
    const job = await start(requestFor([pv], { entityRef: undefined }));
    expect(job).toMatchObject({
      entityRef: ORDERS,
      tracedTo: { claimants: [ORDERS], unverified: [] },
    });
    expect((await store.getJob(job.id))?.tracedTo).toEqual({
      claimants: [ORDERS],
      unverified: [],
    });
  });
});

describe('reclaimLeaseName', () => {
  it('names the Lease after the claim namespace, and keeps a long one distinct and within 63 characters', () => {
    expect(reclaimLeaseName('shop')).toBe('pvc-pruner--reclaim-shop');
    // The longest namespace name (63) and one sharing its first 52 characters.
    const longest = 'n'.repeat(63);
    const sibling = `${'n'.repeat(52)}${'m'.repeat(11)}`;
    expect(reclaimLeaseName(longest)).toHaveLength(63);
    expect(reclaimLeaseName(longest)).toMatch(
      /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/,
    );
    expect(reclaimLeaseName(longest)).not.toBe(reclaimLeaseName(sibling));
    // Right at the edge: 20 + 43 = 63 characters are kept whole.
    expect(reclaimLeaseName('a'.repeat(43))).toBe(
      `pvc-pruner--reclaim-${'a'.repeat(43)}`,
    );
    expect(reclaimLeaseName('a'.repeat(44))).toHaveLength(63);
    expect(reclaimLeaseName('a'.repeat(44))).not.toContain('a'.repeat(44));
  });

  it('is never the prune Lease of a StatefulSet, whatever its name (reclaim-<namespace>, say, in the lease namespace)', () => {
    for (const namespace of ['shop', 'n'.repeat(63)])
      expect(reclaimLeaseName(namespace)).not.toBe(
        leaseNameFor(`reclaim-${namespace}`),
      );
    // A StatefulSet's name is a DNS subdomain: it cannot start with the hyphen after leaseNameFor's prefix.
    expect(reclaimLeaseName('shop').slice('pvc-pruner-'.length)).toMatch(/^-/);
  });
});
