import { KubeSim, statefulSet } from 'kube-sim';
import { startShopSimulator } from '../__testUtils__/shopSimulator';
import type { SubjectGuard } from '../jobs';
import type { KubeGateway } from '../kubernetes';
import { DeletedStatefulSetGuard } from './DeletedStatefulSetGuard';
import { deletedStatefulSet } from './leftBehindRule';

/* The guard of a prune of a deleted StatefulSet's claims, against the simulator's watch. */

let sim: KubeSim;
let gateway: KubeGateway;
let guard: SubjectGuard | undefined;
let n = 0;
let name: string;

const settle = () => new Promise(r => setTimeout(r, 150));
const deleted = () =>
  deletedStatefulSet({
    namespace: 'shop',
    name,
    uid: 'gone',
    templates: ['data'],
  });
/** The simulator's gateway, with watches that bring nothing. */
const laggingGateway = () =>
  Object.assign(Object.create(gateway), {
    watchOne: async () => () => {},
  }) as KubeGateway;
const start = (g = gateway) =>
  DeletedStatefulSetGuard.of(deleted()).start(g, 'shop', name);

beforeAll(async () => {
  ({ sim, gateway } = await startShopSimulator());
});
afterAll(async () => {
  await sim.close();
});
beforeEach(() => {
  name = `gone-db${++n}`;
});
afterEach(() => {
  guard?.stop();
  guard = undefined;
});

describe('DeletedStatefulSetGuard', () => {
  it('lets deletes go out while no StatefulSet of the name exists, judging its claims as never scaled up', async () => {
    guard = await start();
    await guard.confirmLive(gateway);
    await settle();
    expect(guard.abortReason).toBeUndefined();
    expect(guard.current.metadata?.name).toBe(name);
    expect(guard.pausedStatefulSets).toBe('offer');
  });

  it('stops the job once a StatefulSet of the name is created, from its watch', async () => {
    guard = await start();
    sim.store.create(
      'apps/statefulsets',
      statefulSet(name, { replicas: 3 }, 'shop'),
    );
    await settle();
    expect(guard.abortReason).toMatch(`StatefulSet shop/${name} exists again`);
  });

  it('catches the new StatefulSet in its live read when the watch has not brought it yet', async () => {
    const lagging = laggingGateway();
    guard = await start(lagging);
    sim.store.create(
      'apps/statefulsets',
      statefulSet(name, { replicas: 1 }, 'shop'),
    );
    expect(guard.abortReason).toBeUndefined();
    await guard.confirmLive(lagging);
    expect(guard.abortReason).toMatch('exists again');
  });

  it('refuses from the start when the StatefulSet already exists', async () => {
    sim.store.create(
      'apps/statefulsets',
      statefulSet(name, { replicas: 1 }, 'shop'),
    );
    guard = await start();
    expect(guard.abortReason).toMatch('exists again');
  });

  it('refuses to guard another StatefulSet than the deleted one', async () => {
    await expect(
      DeletedStatefulSetGuard.of(deleted()).start(gateway, 'shop', 'other'),
    ).rejects.toThrow(/not shop\//);
  });

  describe('for claims known by name and labels, whose names read as more than one StatefulSet', () => {
    /** data-<name>-0 also reads as ordinal 0 of `other`, template data-… */
    const other = () => `other-of-${name}`;
    const startReading = (g = gateway) =>
      DeletedStatefulSetGuard.of(deleted(), [other()]).start(g, 'shop', name);

    it('stops the job once a StatefulSet of another reading’s name is created, from its watch', async () => {
      guard = await startReading();
      sim.store.create(
        'apps/statefulsets',
        statefulSet(other(), { replicas: 1 }, 'shop'),
      );
      await settle();
      expect(guard.abortReason).toMatch(
        `StatefulSet shop/${other()} exists, a name these claims' names also read as`,
      );
    });

    it('catches it in the live read before each batch when the watch has not brought it yet', async () => {
      const lagging = laggingGateway();
      guard = await startReading(lagging);
      sim.store.create(
        'apps/statefulsets',
        statefulSet(other(), { replicas: 1 }, 'shop'),
      );
      await guard.confirmLive(lagging);
      expect(guard.abortReason).toMatch(`StatefulSet shop/${other()} exists`);
    });
  });
});
