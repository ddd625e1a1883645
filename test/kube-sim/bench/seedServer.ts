/**
 * The simulator under benchmark, in its own process so its RSS is its own.
 * Seeds N StatefulSets with M PVCs each straight into the store, then reports
 * its URL, token and memory to the parent over IPC.
 */
import { pvc, startKubeSim, statefulSet } from '../src';

async function main() {
  const statefulSets = Number(process.env.BENCH_STATEFULSETS ?? 500);
  const perSet = Number(process.env.BENCH_PVCS_PER_SET ?? 100);
  const sim = await startKubeSim({ controllers: false, historyLimit: 200000 });
  const namespaces = 10;
  for (let n = 0; n < namespaces; n++) {
    sim.store.create('namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: `bench-${n}` } as never,
    });
  }
  for (let s = 0; s < statefulSets; s++) {
    const namespace = `bench-${s % namespaces}`;
    const name = `db-${s}`;
    const labels = { app: name, 'backstage.io/kubernetes-id': `svc-${s}` };
    sim.store.create(
      'apps/statefulsets',
      statefulSet(name, { replicas: 0 }, namespace, labels),
    );
    for (let i = 0; i < perSet; i++) {
      sim.store.create(
        'persistentvolumeclaims',
        pvc(`data-${name}-${i}`, {}, namespace, labels),
      );
    }
  }
  global.gc?.();
  process.send!({
    url: sim.url,
    token: sim.token,
    pvcs: sim.store.count('persistentvolumeclaims'),
  });
  process.on('message', (msg: { type: string }) => {
    if (msg.type === 'rss') {
      global.gc?.();
      process.send!({
        rss: process.memoryUsage().rss,
        heapUsed: process.memoryUsage().heapUsed,
      });
    }
    if (msg.type === 'update') {
      const { namespace, name } = msg as unknown as {
        namespace: string;
        name: string;
      };
      const claim = sim.store.get('persistentvolumeclaims', namespace, name)!;
      sim.store.update('persistentvolumeclaims', {
        ...claim,
        metadata: {
          ...claim.metadata,
          annotations: { touched: String(Date.now()) },
        },
      });
    }
  });
}

main().catch(e => {
  process.stderr.write(`${e.stack}\n`);
  process.exit(1);
});
