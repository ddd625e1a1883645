import { KubeSim, pvc } from 'kube-sim';
import { startShopSimulator } from '../__testUtils__/shopSimulator';
import { ClusterRequestError, KubeGateway } from './KubeGateway';
import { RawApiClient } from './RawApiClient';
import { ClusterConnection } from './ClusterConnection';

/* The gateway's contract with the plugin: every failure is a ClusterRequestError naming the cluster, never the token. */

let sim: KubeSim;
let kc: ClusterConnection;

beforeAll(async () => {
  ({ sim, connection: kc } = await startShopSimulator());
  for (let i = 0; i < 7; i++)
    sim.store.create('persistentvolumeclaims', pvc(`data-db-${i}`, {}, 'shop'));
});

afterAll(async () => {
  await sim.close();
});

afterEach(() => {
  sim.clearFaults();
  sim.clearRequests();
});

async function failure(
  promise: Promise<unknown>,
): Promise<ClusterRequestError> {
  const error = await promise.then(
    () => undefined,
    e => e,
  );
  expect(error).toBeInstanceOf(ClusterRequestError);
  expect(error.message).not.toContain(sim.token);
  return error;
}

describe('KubeGateway', () => {
  it('lists every page, following continue tokens', async () => {
    const gateway = new KubeGateway('demo', kc, 5000, { pageSize: 3 });

    const claims = await gateway.listClaims('shop');

    expect(claims.map(c => c.metadata?.name)).toEqual(
      Array.from({ length: 7 }, (_, i) => `data-db-${i}`),
    );
    const lists = sim.requests().filter(r => r.verb === 'list');
    expect(lists).toHaveLength(3);
    expect(
      lists.every(r => new URLSearchParams(r.query).get('limit') === '3'),
    ).toBe(true);
  });

  it('reads a missing claim or volume as undefined, not an error', async () => {
    const gateway = new KubeGateway('demo', kc, 5000);

    await expect(gateway.readClaim('shop', 'nope')).resolves.toBeUndefined();
    await expect(gateway.readVolume('nope')).resolves.toBeUndefined();
    await expect(gateway.readClaim('shop', 'data-db-0')).resolves.toMatchObject(
      { metadata: { name: 'data-db-0' } },
    );
  });

  it('reports a refusal with the cluster, the request, the status and Kubernetes’ own message', async () => {
    const gateway = new KubeGateway('demo', kc, 5000);
    sim.addFault({
      verb: 'list',
      resource: 'pods',
      status: 403,
      message: 'pods is forbidden: no list for you',
    });

    const error = await failure(gateway.listPods('shop'));

    expect(error).toMatchObject({
      cluster: 'demo',
      statusCode: 403,
      reason: 'Forbidden',
    });
    expect(error.message).toBe(
      'cluster "demo" refused list pods in shop: 403 Forbidden (pods is forbidden: no list for you)',
    );
  });

  it('gives up on a slow cluster after its timeout, naming it', async () => {
    const gateway = new KubeGateway('demo', kc, 200);
    sim.addFault({
      verb: 'get',
      resource: 'persistentvolumes',
      latencyMs: 1000,
    });

    const started = Date.now();
    const error = await failure(gateway.readVolume('pv-1'));

    expect(Date.now() - started).toBeLessThan(900);
    expect(error).toMatchObject({ statusCode: 504, reason: 'Timeout' });
    expect(error.message).toBe(
      'cluster "demo" did not answer get persistentvolume pv-1 within 200 ms',
    );
  });

  it('closes the request it gave up on, rather than leaving it open', async () => {
    const gateway = new KubeGateway('demo', kc, 200);
    sim.addFault({ verb: 'list', resource: 'pods', latencyMs: 1000 });
    const getJson = jest.spyOn(RawApiClient.prototype, 'getJson');

    await failure(gateway.listPods('shop'));

    const { signal } = getJson.mock.calls[0][1];
    expect(signal?.aborted).toBe(true);
    await expect(getJson.mock.results[0].value).rejects.toMatchObject({
      name: 'AbortError',
    });
    getJson.mockRestore();
  });

  it('reports an unreachable cluster without its token', async () => {
    const closed = new ClusterConnection(
      { name: 'gone', server: 'https://127.0.0.1:9', skipTLSVerify: true },
      async () => ({ type: 'bearer token', token: sim.token }),
      true,
    );
    const gateway = new KubeGateway('gone', closed, 5000);

    const error = await failure(gateway.listStatefulSets('app=x'));

    expect(error.message).toMatch(
      /^cluster "gone" is unreachable for list statefulsets: /,
    );
    expect(error.statusCode).toBeUndefined();
  });

  it('deletes a claim only with its uid and resourceVersion, and dry runs with dryRun=All', async () => {
    const gateway = new KubeGateway('demo', kc, 5000);
    const current = (await gateway.readClaim('shop', 'data-db-6'))!;
    const preconditions = {
      uid: current.metadata!.uid!,
      resourceVersion: current.metadata!.resourceVersion!,
    };

    await gateway.deleteClaim('shop', 'data-db-6', preconditions, true);
    expect(
      sim.store.get('persistentvolumeclaims', 'shop', 'data-db-6'),
    ).toBeDefined();
    expect(
      new URLSearchParams(
        sim.requests().find(r => r.method === 'DELETE')!.query,
      ).get('dryRun'),
    ).toBe('All');

    const stale = await failure(
      gateway.deleteClaim(
        'shop',
        'data-db-6',
        { ...preconditions, resourceVersion: '1' },
        false,
      ),
    );
    expect(stale).toMatchObject({ statusCode: 409, reason: 'Conflict' });
    const wrongUid = await failure(
      gateway.deleteClaim(
        'shop',
        'data-db-6',
        { ...preconditions, uid: 'another-uid' },
        false,
      ),
    );
    expect(wrongUid.statusCode).toBe(409);
    expect(
      sim.store.get('persistentvolumeclaims', 'shop', 'data-db-6'),
    ).toBeDefined();

    await gateway.deleteClaim('shop', 'data-db-6', preconditions, false);
    const after = sim.store.get('persistentvolumeclaims', 'shop', 'data-db-6');
    expect(
      after === undefined || after.metadata.deletionTimestamp !== undefined,
    ).toBe(true);
  });
});
