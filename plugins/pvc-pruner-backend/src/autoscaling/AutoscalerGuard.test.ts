import { horizontalPodAutoscaler, KubeObject, KubeSim } from 'kube-sim';
import { startShopSimulator } from '../__testUtils__/shopSimulator';
import { KubeGateway } from '../kubernetes';
import { AutoscalerGuard } from './AutoscalerGuard';

/* AutoscalerGuard against the simulator's list and watch (no controllers: the test changes the HPAs itself). */

const HPAS = 'autoscaling/horizontalpodautoscalers';

let sim: KubeSim;
let gateway: KubeGateway;
let guard: AutoscalerGuard | undefined;

/** A fresh StatefulSet name per test, so HPAs of earlier tests target other ones. */
let n = 0;
let db: string;

const settle = () => new Promise(r => setTimeout(r, 150));

function createHpa(
  name: string,
  maxReplicas: number,
  target = db,
  spec: Record<string, unknown> = {},
) {
  return sim.store.create(
    HPAS,
    horizontalPodAutoscaler(name, target, { maxReplicas }, 'shop', spec),
  );
}

function updateHpa(name: string, change: (hpa: KubeObject) => void) {
  const hpa = structuredClone(sim.store.require(HPAS, 'shop', name));
  change(hpa);
  sim.store.update(HPAS, hpa);
}

/** The gateway with a watch that has not delivered anything yet (a busy process, a slow watch). */
const slowWatch = () =>
  Object.assign(Object.create(gateway), {
    watchAutoscalers: async () => () => {},
  }) as KubeGateway;

beforeAll(async () => {
  ({ sim, gateway } = await startShopSimulator());
});

afterAll(async () => {
  await sim.close();
});

beforeEach(() => {
  db = `db${++n}`;
});

afterEach(() => {
  guard?.stop();
  guard = undefined;
  sim.clearFaults();
});

describe('AutoscalerGuard', () => {
  it('keeps the HPAs that target the StatefulSet, and none of the others', async () => {
    createHpa(`${db}-hpa`, 4);
    createHpa(`${db}-other`, 9, 'someone-else');
    createHpa(`${db}-deployment`, 9, db, {
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: db },
    });

    guard = await AutoscalerGuard.start(gateway, 'shop', db);

    expect(
      guard.autoscalers.map(h => [h.metadata?.name, h.spec?.maxReplicas]),
    ).toEqual([[`${db}-hpa`, 4]]);
    // Trimmed to what the orphan rule reads.
    expect(guard.autoscalers[0].spec).not.toHaveProperty('metrics');
    expect(guard.abortReason).toBeUndefined();
  });

  it.each<[string, () => void, (db: string) => string]>([
    [
      'an HPA is created for the StatefulSet',
      () => createHpa(`${db}-hpa`, 6),
      s =>
        `HorizontalPodAutoscaler shop/${s}-hpa was created during the job and scales StatefulSet shop/${s} up to 6 replicas`,
    ],
    [
      "an HPA's maxReplicas rises",
      () => updateHpa(`${db}-existing`, h => (h.spec.maxReplicas = 5)),
      s =>
        `HorizontalPodAutoscaler shop/${s}-existing raised the maxReplicas of StatefulSet shop/${s} from 3 to 5 during the job`,
    ],
    [
      'an HPA of another workload is changed to target the StatefulSet',
      () =>
        updateHpa(`${db}-elsewhere`, h => (h.spec.scaleTargetRef.name = db)),
      s =>
        `HorizontalPodAutoscaler shop/${s}-elsewhere was changed during the job to scale StatefulSet shop/${s} up to 7 replicas`,
    ],
  ])('aborts when %s', async (_what, change, reason) => {
    createHpa(`${db}-existing`, 3);
    createHpa(`${db}-elsewhere`, 7, 'someone-else');
    guard = await AutoscalerGuard.start(gateway, 'shop', db);

    change();
    await settle();

    expect(guard.abortReason).toBe(reason(db));
  });

  it('does not abort when an HPA is lowered or deleted, or one of another workload changes', async () => {
    createHpa(`${db}-a`, 6);
    createHpa(`${db}-b`, 6);
    createHpa(`${db}-elsewhere`, 2, 'someone-else');
    guard = await AutoscalerGuard.start(gateway, 'shop', db);

    updateHpa(`${db}-a`, h => (h.spec.maxReplicas = 2));
    sim.store.delete(HPAS, 'shop', `${db}-b`);
    updateHpa(`${db}-elsewhere`, h => (h.spec.maxReplicas = 40));
    createHpa(`${db}-new-elsewhere`, 40, 'someone-else');
    await settle();

    expect(guard.abortReason).toBeUndefined();
    expect(
      guard.autoscalers.map(h => [h.metadata?.name, h.spec?.maxReplicas]),
    ).toEqual([[`${db}-a`, 2]]);
  });

  it('aborts when an HPA is deleted and created again under its name', async () => {
    createHpa(`${db}-hpa`, 3);
    guard = await AutoscalerGuard.start(gateway, 'shop', db);

    sim.store.delete(HPAS, 'shop', `${db}-hpa`);
    createHpa(`${db}-hpa`, 3);
    await settle();

    expect(guard.abortReason).toBe(
      `HorizontalPodAutoscaler shop/${db}-hpa was created during the job and scales StatefulSet shop/${db} up to 3 replicas`,
    );
  });

  it('sees an HPA created between its list and its watch (it watches from the version it listed)', async () => {
    const list = gateway.listAutoscalers.bind(gateway);
    jest
      .spyOn(gateway, 'listAutoscalers')
      .mockImplementationOnce(async (ns, pick) => {
        const listed = await list(ns, pick);
        createHpa(`${db}-hpa`, 4);
        return listed;
      });

    guard = await AutoscalerGuard.start(gateway, 'shop', db);
    await settle();

    expect(guard.abortReason).toMatch(
      new RegExp(`^HorizontalPodAutoscaler shop/${db}-hpa was created`),
    );
  });

  describe('confirmLive, the last check before a delete', () => {
    it('catches an HPA the API server has and the watch has not brought yet', async () => {
      const lagging = slowWatch();
      guard = await AutoscalerGuard.start(lagging, 'shop', db);
      createHpa(`${db}-hpa`, 8);
      expect(guard.abortReason).toBeUndefined();

      await guard.confirmLive(lagging);

      expect(guard.abortReason).toBe(
        `HorizontalPodAutoscaler shop/${db}-hpa was created during the job and scales StatefulSet shop/${db} up to 8 replicas`,
      );
      expect(guard.autoscalers.map(h => h.metadata?.name)).toEqual([
        `${db}-hpa`,
      ]);
    });

    it('catches a raised maxReplicas, and one that is no longer a replica count', async () => {
      createHpa(`${db}-hpa`, 3);
      const lagging = slowWatch();
      guard = await AutoscalerGuard.start(lagging, 'shop', db);
      // Only a broken or hostile API server sends such a value: write it past validation.
      jest
        .spyOn(lagging, 'listAutoscalers')
        .mockImplementationOnce(async () => {
          const hpa = structuredClone(
            sim.store.require(HPAS, 'shop', `${db}-hpa`),
          );
          hpa.spec.maxReplicas = 'lots';
          return { items: [hpa as any], resourceVersion: '1' };
        });

      await guard.confirmLive(lagging);

      expect(guard.abortReason).toBe(
        `HorizontalPodAutoscaler shop/${db}-hpa raised the maxReplicas of StatefulSet shop/${db} from 3 to no replica count during the job`,
      );
    });

    it('catches an HPA deleted and created again under its name that the watch has not brought', async () => {
      createHpa(`${db}-hpa`, 3);
      const lagging = slowWatch();
      guard = await AutoscalerGuard.start(lagging, 'shop', db);
      sim.store.delete(HPAS, 'shop', `${db}-hpa`);
      createHpa(`${db}-hpa`, 3);

      await guard.confirmLive(lagging);

      expect(guard.abortReason).toBe(
        `HorizontalPodAutoscaler shop/${db}-hpa was created during the job and scales StatefulSet shop/${db} up to 3 replicas`,
      );
    });

    it('lets unchanged HPAs through, and forgets the ones deleted', async () => {
      createHpa(`${db}-hpa`, 3);
      createHpa(`${db}-gone`, 5);
      const lagging = slowWatch();
      guard = await AutoscalerGuard.start(lagging, 'shop', db);
      sim.store.delete(HPAS, 'shop', `${db}-gone`);

      await guard.confirmLive(lagging);

      expect(guard.abortReason).toBeUndefined();
      expect(guard.autoscalers.map(h => h.metadata?.name)).toEqual([
        `${db}-hpa`,
      ]);
    });

    it('fails as the list fails, rather than let a delete through unchecked', async () => {
      guard = await AutoscalerGuard.start(gateway, 'shop', db);
      sim.addFault({
        verb: 'list',
        resource: 'horizontalpodautoscalers',
        status: 503,
      });

      await expect(guard.confirmLive(gateway)).rejects.toThrow(
        /cluster "demo" refused list horizontalpodautoscalers in shop: 503/,
      );
    });
  });

  it('aborts when its watch ends, since a new autoscaler could then go unseen', async () => {
    guard = await AutoscalerGuard.start(gateway, 'shop', db);

    sim.dropWatches();
    await settle();

    expect(guard.abortReason).toMatch(
      new RegExp(
        `^the watch on the HorizontalPodAutoscalers of namespace shop ended.*so a new or raised autoscaler of StatefulSet shop/${db} could go unseen$`,
      ),
    );
  });

  it('aborts, saying why, when its watch fails (a 200 whose ERROR event is a 410 Expired)', async () => {
    sim.addFault({ verb: 'watch', status: 410, times: 1 });
    guard = await AutoscalerGuard.start(gateway, 'shop', db);
    await settle();

    expect(guard.abortReason).toBe(
      'the watch on the HorizontalPodAutoscalers of namespace shop failed: injected fault: expired',
    );
  });

  it('keeps the first reason when several things happen', async () => {
    createHpa(`${db}-hpa`, 3);
    guard = await AutoscalerGuard.start(gateway, 'shop', db);

    updateHpa(`${db}-hpa`, h => (h.spec.maxReplicas = 4));
    await settle();
    createHpa(`${db}-second`, 9);
    await settle();

    expect(guard.abortReason).toMatch(/from 3 to 4 during the job$/);
  });

  it('fails to start, naming the cluster, when the HPAs cannot be read', async () => {
    sim.addFault({
      verb: 'list',
      resource: 'horizontalpodautoscalers',
      status: 403,
    });

    await expect(AutoscalerGuard.start(gateway, 'shop', db)).rejects.toThrow(
      /^cluster "demo" refused list horizontalpodautoscalers in shop: 403/,
    );
  });

  it('stops watching when stopped', async () => {
    guard = await AutoscalerGuard.start(gateway, 'shop', db);
    guard.stop();
    await settle();
    createHpa(`${db}-hpa`, 4);
    await settle();
    // The watch is closed: nothing more arrives, and its end is no reason either.
    expect(guard.abortReason).toBeUndefined();
  });
});
