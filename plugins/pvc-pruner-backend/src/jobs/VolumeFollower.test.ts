import { KubeSim, pvc } from 'kube-sim';
import { startShopSimulator } from '../__testUtils__/shopSimulator';
import { KubeGateway } from '../kubernetes';
import { VolumeFollower } from './VolumeFollower';

/* VolumeFollower against the simulator (no controllers): a claim held by a finalizer, released by hand. */

let sim: KubeSim;
let gateway: KubeGateway;

const HOLD = 'acc.example/backup-hold';
const CLAIMS = 'persistentvolumeclaims';

beforeAll(async () => {
  ({ sim, gateway } = await startShopSimulator());
});

afterAll(async () => {
  await sim.close();
});

afterEach(() => {
  sim.clearFaults();
  sim.clearRequests();
});

/** A claim held by a foreign finalizer, deleted: it stays Terminating until the finalizer goes. */
function terminatingClaim(name: string) {
  const claim = pvc(name, {}, 'shop');
  claim.metadata.finalizers = [HOLD];
  sim.store.create(CLAIMS, claim);
  sim.store.delete(CLAIMS, 'shop', name, {});
  expect(
    sim.store.get(CLAIMS, 'shop', name)?.metadata.deletionTimestamp,
  ).toBeDefined();
}

function releaseHold(name: string) {
  const claim = structuredClone(sim.store.require(CLAIMS, 'shop', name));
  claim.metadata.finalizers = [];
  sim.store.update(CLAIMS, claim);
}

const sleep = (ms: number) => new Promise(r => setTimeout(r, ms));

async function watchOpened() {
  while (!sim.requests().some(r => r.verb === 'watch')) await sleep(20);
}

describe('VolumeFollower', () => {
  it('sees a claim go even when its watch is dropped first: it reads again and watches again', async () => {
    terminatingClaim('dropped-watch');
    const follow = new VolumeFollower(5000).claimGone(
      gateway,
      'shop',
      'dropped-watch',
    );
    await watchOpened();
    expect(sim.dropWatches()).toBeGreaterThan(0);
    await sleep(700);
    releaseHold('dropped-watch');

    await expect(follow).resolves.toEqual({ gone: true });
  });

  it('sees a claim go after its watch expired (200 with an ERROR 410 event), by reading and watching again', async () => {
    terminatingClaim('expired-watch');
    sim.addFault({ verb: 'watch', status: 410, times: 1 });
    const follow = new VolumeFollower(5000).claimGone(
      gateway,
      'shop',
      'expired-watch',
    );
    await sleep(800);
    releaseHold('expired-watch');

    await expect(follow).resolves.toEqual({ gone: true });
  });

  it('gives up at its timeout on a claim a finalizer keeps, naming the finalizers that hold it', async () => {
    terminatingClaim('held');
    const started = Date.now();

    await expect(
      new VolumeFollower(600).claimGone(gateway, 'shop', 'held'),
    ).resolves.toEqual({
      gone: false,
      finalizers: [HOLD, 'kubernetes.io/pvc-protection'],
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(590);
  });

  it('stops following when told to (the instance shuts down), undecided', async () => {
    terminatingClaim('shutdown');
    const stop = new AbortController();
    const follow = new VolumeFollower(10_000).claimGone(
      gateway,
      'shop',
      'shutdown',
      stop.signal,
    );
    await watchOpened();
    const started = Date.now();
    stop.abort();

    await expect(follow).resolves.toMatchObject({ gone: false });
    expect(Date.now() - started).toBeLessThan(1000);
  });
});
