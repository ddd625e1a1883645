import { DatabaseService } from '@backstage/backend-plugin-api';
import { PruneEvent } from 'backstage-plugin-pvc-pruner-common';
import knexFactory, { Knex } from 'knex';
import { KubeSim, pvc, statefulSet } from 'kube-sim';
import { startShopSimulator } from '../__testUtils__/shopSimulator';
import { JobEvents } from './JobEvents';
import { KubeGateway } from '../kubernetes';
import { HeldLease } from './LeaseLock';
import { PruneJobStore } from '../database';
import { PruneRunner } from './PruneRunner';
import { VolumeFollower } from './VolumeFollower';

/* PruneRunner against the simulator (no controllers) and an in-memory SQLite job store. */

let sim: KubeSim;
let gateway: KubeGateway;
let knex: Knex;
let store: PruneJobStore;

const lease: HeldLease = {
  name: 'pvc-pruner-web',
  namespace: 'shop',
  renew: async () => {},
  release: async () => {},
};

beforeAll(async () => {
  ({ sim, gateway } = await startShopSimulator());
  sim.store.create(
    'apps/statefulsets',
    statefulSet('web', { replicas: 1 }, 'shop'),
  );
});

afterAll(async () => {
  await sim.close();
});

beforeEach(async () => {
  knex = knexFactory({
    client: 'better-sqlite3',
    connection: ':memory:',
    useNullAsDefault: true,
  });
  store = await PruneJobStore.create({
    database: {
      getClient: async () => knex,
      migrations: { skip: false },
    } as DatabaseService,
  });
});

afterEach(async () => {
  sim.clearFaults();
  sim.clearRequests();
  await knex.destroy();
});

function createClaims(names: string[]) {
  return names.map(name => {
    const claim = sim.store.create(
      'persistentvolumeclaims',
      pvc(name, {}, 'shop'),
    );
    return { name, uid: claim.metadata.uid as string };
  });
}

describe('PruneRunner', () => {
  it('stops before its next delete once another replica has marked its job interrupted, and leaves it so', async () => {
    const pvcs = createClaims(['data-web-1', 'data-web-2', 'data-web-3']);
    // Each delete takes a while, so the sweep lands while the first is in flight.
    sim.addFault({
      verb: 'delete',
      resource: 'persistentvolumeclaims',
      latencyMs: 300,
    });
    const job = await store.createJob({
      entityRef: 'component:default/web',
      cluster: 'demo',
      namespace: 'shop',
      statefulSet: 'web',
      dryRun: false,
      requestedBy: 'user:default/guest',
      pvcs,
    });
    const events = new JobEvents(store);
    const reason =
      'The Backstage instance running this job stopped before it finished';
    let sweep: Promise<unknown> | undefined;
    events.subscribe(job.id, (event: PruneEvent) => {
      // Another replica took this one for dead (its heartbeat was late).
      if (event.type === 'pvc-deleting')
        sweep ??= store.markInterrupted({
          staleBefore: new Date(Date.now() + 60_000),
          reason,
        });
    });

    const result = await new PruneRunner(
      store,
      events,
      new VolumeFollower(500),
      {
        renewIntervalMs: 60_000,
      },
    ).run(job, gateway, lease);

    expect(result.status).toBe('interrupted');
    const deletes = sim
      .requests()
      .filter(
        r => r.verb === 'delete' && r.resource === 'persistentvolumeclaims',
      );
    expect(deletes.map(r => r.path.split('/').pop())).toEqual(['data-web-1']);
    const stored = await store.getJob(job.id);
    expect(stored).toMatchObject({ status: 'interrupted', reason });
    expect(stored?.summary?.deleted.map(d => d.name)).toEqual(['data-web-1']);
    expect(stored?.summary?.skipped).toEqual([
      expect.objectContaining({
        name: 'data-web-2',
        reason: 'not attempted: the job was ended elsewhere (interrupted)',
      }),
      expect.objectContaining({ name: 'data-web-3' }),
    ]);
    const finished = (await store.listEvents(job.id)).filter(
      e => e.type === 'job-finished',
    );
    expect(finished).toEqual([
      expect.objectContaining({ status: 'interrupted', message: reason }),
    ]);
  });
});
