import { KubeObject, KubeSim, statefulSet } from 'kube-sim';
import { startShopSimulator } from '../__testUtils__/shopSimulator';
import { KubeGateway } from '../kubernetes';
import { StatefulSetGuard } from './StatefulSetGuard';

/* StatefulSetGuard against the simulator's watch (no controllers: the test changes the StatefulSet itself). */

let sim: KubeSim;
let gateway: KubeGateway;
let guard: StatefulSetGuard | undefined;

function update(name: string, change: (sts: KubeObject) => void) {
  const sts = structuredClone(
    sim.store.require('apps/statefulsets', 'shop', name),
  );
  change(sts);
  sim.store.update('apps/statefulsets', sts);
}

const settle = () => new Promise(r => setTimeout(r, 150));

beforeAll(async () => {
  ({ sim, gateway } = await startShopSimulator());
});

afterAll(async () => {
  await sim.close();
});

let n = 0;
let db: string;

beforeEach(() => {
  // A fresh StatefulSet for each test.
  db = `db${++n}`;
  sim.store.create(
    'apps/statefulsets',
    statefulSet(db, { replicas: 2 }, 'shop'),
  );
});

afterEach(() => {
  guard?.stop();
  guard = undefined;
});

describe('StatefulSetGuard', () => {
  describe('confirmLive, the last check before a delete', () => {
    /** The gateway with a watch that has not delivered anything yet (a busy process, a slow watch). */
    const slowWatch = () =>
      Object.assign(Object.create(gateway), {
        watchOne: async () => () => {},
      }) as KubeGateway;

    it('catches a change to the ordinals that the API server has and the watch has not brought yet', async () => {
      const lagging = slowWatch();
      guard = await StatefulSetGuard.start(lagging, 'shop', db);
      update(db, sts => {
        sts.spec.replicas = 3;
      });
      expect(guard.abortReason).toBeUndefined();

      await guard.confirmLive(lagging);

      expect(guard.abortReason).toBe(
        `StatefulSet shop/${db} changed from ordinals 0–1 to ordinals 0–2 during the job`,
      );
    });

    it('catches the StatefulSet deleted and created again under its name', async () => {
      const lagging = slowWatch();
      guard = await StatefulSetGuard.start(lagging, 'shop', db);
      sim.store.delete('apps/statefulsets', 'shop', db, {});
      sim.store.create(
        'apps/statefulsets',
        statefulSet(db, { replicas: 2 }, 'shop'),
      );

      await guard.confirmLive(lagging);

      expect(guard.abortReason).toBe(
        `StatefulSet shop/${db} was deleted and created again during the job (its uid changed)`,
      );
    });

    it('catches the StatefulSet deleted', async () => {
      const lagging = slowWatch();
      guard = await StatefulSetGuard.start(lagging, 'shop', db);
      sim.store.delete('apps/statefulsets', 'shop', db, {});

      await guard.confirmLive(lagging);

      expect(guard.abortReason).toBe(
        `StatefulSet shop/${db} was deleted during the job`,
      );
    });

    it('lets an unchanged StatefulSet through', async () => {
      const lagging = slowWatch();
      guard = await StatefulSetGuard.start(lagging, 'shop', db);

      await guard.confirmLive(lagging);

      expect(guard.abortReason).toBeUndefined();
    });
  });

  it('watches a StatefulSet nothing changed since a compaction, and still sees the next change', async () => {
    // Another write after it, then a compaction: its own resourceVersion is now older than the server keeps.
    sim.store.create(
      'apps/statefulsets',
      statefulSet(`${db}-other`, { replicas: 1 }, 'shop'),
    );
    sim.compact();
    guard = await StatefulSetGuard.start(gateway, 'shop', db);
    await settle();
    expect(guard.abortReason).toBeUndefined();

    update(db, sts => {
      sts.spec.replicas = 3;
    });
    await settle();

    expect(guard.abortReason).toBe(
      `StatefulSet shop/${db} changed from ordinals 0–1 to ordinals 0–2 during the job`,
    );
  });

  it('keeps the StatefulSet it read, and does not abort for changes that keep its ordinals', async () => {
    guard = await StatefulSetGuard.start(gateway, 'shop', db);
    expect(guard.current.spec?.replicas).toBe(2);

    update(db, sts => {
      sts.metadata.labels = { ...sts.metadata.labels, touched: 'yes' };
      sts.status = { replicas: 2, readyReplicas: 1 };
    });
    await settle();

    expect(guard.abortReason).toBeUndefined();
    expect(guard.current.metadata?.labels?.touched).toBe('yes');
  });

  it.each([
    [
      'scaled up',
      (s: KubeObject) => (s.spec.replicas = 5),
      'changed from ordinals 0–1 to ordinals 0–4 during the job',
    ],
    [
      'scaled down to 0',
      (s: KubeObject) => (s.spec.replicas = 0),
      'changed from ordinals 0–1 to no ordinals (0 replicas) during the job',
    ],
    [
      'given another start ordinal',
      (s: KubeObject) => (s.spec.ordinals = { start: 3 }),
      'changed from ordinals 0–1 to ordinals 3–4 during the job',
    ],
  ])('aborts when the StatefulSet is %s', async (_what, change, reason) => {
    guard = await StatefulSetGuard.start(gateway, 'shop', db);

    update(db, change);
    await settle();

    expect(guard.abortReason).toBe(`StatefulSet shop/${db} ${reason}`);
  });

  it('sees a change made between its read and its watch (it watches from the version it read)', async () => {
    const read = gateway.readStatefulSetToWatch.bind(gateway);
    jest
      .spyOn(gateway, 'readStatefulSetToWatch')
      .mockImplementationOnce(async (ns, name) => {
        const answer = await read(ns, name);
        update(db, s => (s.spec.replicas = 3));
        return answer;
      });

    guard = await StatefulSetGuard.start(gateway, 'shop', db);
    await settle();

    expect(guard.abortReason).toBe(
      `StatefulSet shop/${db} changed from ordinals 0–1 to ordinals 0–2 during the job`,
    );
  });

  it('aborts when the StatefulSet is deleted', async () => {
    guard = await StatefulSetGuard.start(gateway, 'shop', db);

    sim.store.delete('apps/statefulsets', 'shop', db, {
      propagationPolicy: 'Background',
    });
    await settle();

    expect(guard.abortReason).toBe(
      `StatefulSet shop/${db} was deleted during the job`,
    );
  });

  it('aborts when its watch ends, since a change could then go unseen', async () => {
    guard = await StatefulSetGuard.start(gateway, 'shop', db);

    sim.dropWatches();
    await settle();

    expect(guard.abortReason).toMatch(
      new RegExp(
        `^the watch on StatefulSet shop/${db} ended.*so a change could go unseen$`,
      ),
    );
  });

  it('aborts, saying why, when its watch expires (a 200 whose ERROR event is a 410 Expired)', async () => {
    sim.addFault({ verb: 'watch', status: 410, times: 1 });
    guard = await StatefulSetGuard.start(gateway, 'shop', db);
    await settle();
    sim.clearFaults();

    expect(guard.abortReason).toBe(
      `the watch on StatefulSet shop/${db} failed: injected fault: expired`,
    );
  });

  it('keeps the first reason when several things happen', async () => {
    guard = await StatefulSetGuard.start(gateway, 'shop', db);

    update(db, s => (s.spec.replicas = 3));
    await settle();
    sim.store.delete('apps/statefulsets', 'shop', db, {
      propagationPolicy: 'Background',
    });
    await settle();

    expect(guard.abortReason).toMatch(
      /changed from ordinals 0–1 to ordinals 0–2/,
    );
  });

  it('fails to start, naming the cluster, for a StatefulSet that does not exist', async () => {
    await expect(
      StatefulSetGuard.start(gateway, 'shop', 'nope'),
    ).rejects.toThrow(
      'cluster "demo" refused list statefulset shop/nope: 404 NotFound (statefulsets.apps "nope" not found)',
    );
  });

  it('fails to start when the list of it carries no resourceVersion to watch from (a watch from now could miss a change)', async () => {
    const answer = { items: [statefulSet(db, { replicas: 2 }, 'shop')] };
    const noVersion = Object.assign(Object.create(gateway), {
      listPages: async () => ({ ...answer, resourceVersion: '' }),
    }) as KubeGateway;

    await expect(StatefulSetGuard.start(noVersion, 'shop', db)).rejects.toThrow(
      /answered a list without a resourceVersion to watch from/,
    );
  });
});
