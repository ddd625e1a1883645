/**
 * The simulator under benchmark, in its own process so its RSS is its own.
 * Seeds N StatefulSets with M PVCs each straight into the store, then reports
 * its URL, token and memory to the parent over IPC.
 */
import { startKubeSim } from '../src';

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
    sim.store.create('apps/statefulsets', {
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { name, namespace, labels } as never,
      spec: {
        replicas: 0,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: { containers: [{ name: 'db', image: 'db:1' }] },
        },
        volumeClaimTemplates: [
          {
            metadata: { name: 'data' },
            spec: {
              accessModes: ['ReadWriteOnce'],
              resources: { requests: { storage: '1Gi' } },
            },
          },
        ],
      },
    });
    for (let i = 0; i < perSet; i++) {
      sim.store.create('persistentvolumeclaims', {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: { name: `data-${name}-${i}`, namespace, labels } as never,
        spec: {
          accessModes: ['ReadWriteOnce'],
          resources: { requests: { storage: '1Gi' } },
        },
      });
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
      const pvc = sim.store.get('persistentvolumeclaims', namespace, name)!;
      sim.store.update('persistentvolumeclaims', {
        ...pvc,
        metadata: {
          ...pvc.metadata,
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
