import {
  CoreV1Api,
  KubeConfig,
  Metrics,
  topPods,
} from '@kubernetes/client-node';
import { eventually, SimHarness, startHarness } from './helpers';

jest.setTimeout(30000);

const METRICS = '/apis/metrics.k8s.io/v1beta1';

/**
 * metrics.k8s.io, as metrics-server serves it: what Backstage's Kubernetes
 * tab asks for when skipMetricsLookup is unset (a 404 there is an error
 * banner), and what `kubectl top pod` reads.
 */
describe('PodMetrics (metrics.k8s.io/v1beta1)', () => {
  let h: SimHarness;
  let kc: KubeConfig;

  beforeAll(async () => {
    h = await startHarness({ scenario: 'demo' });
    kc = new KubeConfig();
    kc.loadFromString(h.sim.kubeconfig);
    // orders-db runs two replicas in the demo scenario.
    await eventually(
      () =>
        ['orders-db-0', 'orders-db-1'].every(
          name =>
            h.sim.store.get('pods', 'shop', name)?.status?.phase === 'Running',
        ) || undefined,
      { message: 'orders-db pods running' },
    );
  });

  afterAll(async () => {
    await h?.close();
  });

  it('is discovered as kube-aggregator lists metrics-server', async () => {
    const groups = (await h.http('GET', '/apis')).json();
    expect(groups.groups).toContainEqual(
      expect.objectContaining({
        name: 'metrics.k8s.io',
        preferredVersion: {
          groupVersion: 'metrics.k8s.io/v1beta1',
          version: 'v1beta1',
        },
      }),
    );
    const resources = (await h.http('GET', METRICS)).json();
    expect(resources.resources).toEqual([
      expect.objectContaining({
        name: 'pods',
        kind: 'PodMetrics',
        namespaced: true,
        verbs: ['get', 'list'],
      }),
    ]);
  });

  it("answers the Kubernetes tab's request: the entity's running pods, zero usage per container", async () => {
    const res = await h.http(
      'GET',
      `${METRICS}/namespaces/shop/pods?labelSelector=${encodeURIComponent(
        'backstage.io/kubernetes-id=orders',
      )}`,
    );
    expect(res.status).toBe(200);
    const list = res.json();
    expect(list.kind).toBe('PodMetricsList');
    expect(list.items.map((m: any) => m.metadata.name).sort()).toEqual([
      'orders-db-0',
      'orders-db-1',
    ]);
    expect(list.items[0]).toMatchObject({
      apiVersion: 'metrics.k8s.io/v1beta1',
      kind: 'PodMetrics',
      metadata: {
        namespace: 'shop',
        labels: { 'backstage.io/kubernetes-id': 'orders' },
      },
      window: '30s',
      containers: [{ name: 'orders-db', usage: { cpu: '0', memory: '0' } }],
    });
  });

  it("gives client-node's topPods (which the Kubernetes backend calls) a status for every pod", async () => {
    const core = kc.makeApiClient(CoreV1Api);
    const statuses = await topPods(core, new Metrics(kc), 'shop');
    const pods = (await core.listNamespacedPod({ namespace: 'shop' })).items;
    expect(statuses.map(s => s.Pod.metadata?.name).sort()).toEqual(
      pods.map(p => p.metadata?.name).sort(),
    );
    const running = statuses.filter(s => s.Pod.status?.phase === 'Running');
    expect(running.length).toBeGreaterThan(0);
    for (const s of running) {
      expect(s.CPU.CurrentUsage).toBe(0);
      expect(s.Containers.map(c => c.Container)).toEqual(
        s.Pod.spec?.containers.map(c => c.name),
      );
    }
  });

  it('kubectl top pod lists the running pods', async () => {
    const result = await h.kubectl([
      'top',
      'pod',
      '-n',
      'shop',
      '-l',
      'backstage.io/kubernetes-id=orders',
    ]);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toMatch(/^NAME\s+CPU\(cores\)\s+MEMORY\(bytes\)/);
    expect(result.stdout).toMatch(/orders-db-0\s+0m\s+0Mi/);
    expect(result.stdout).toMatch(/orders-db-1\s+0m\s+0Mi/);
  });

  it('gets one pod, and answers 404 for a pod that does not run, as metrics-server does', async () => {
    const one = await h.http(
      'GET',
      `${METRICS}/namespaces/shop/pods/orders-db-0`,
    );
    expect(one.status).toBe(200);
    expect(one.json().metadata.name).toBe('orders-db-0');
    const missing = await h.http(
      'GET',
      `${METRICS}/namespaces/shop/pods/orders-db-7`,
    );
    expect(missing.status).toBe(404);
    expect(missing.json().message).toBe(
      'podmetrics.metrics.k8s.io "orders-db-7" not found',
    );
  });

  it('is read-only and cannot be watched', async () => {
    const create = await h.http('POST', `${METRICS}/namespaces/shop/pods`, {
      body: {
        apiVersion: 'metrics.k8s.io/v1beta1',
        kind: 'PodMetrics',
        metadata: { name: 'x' },
      },
    });
    expect(create.status).toBe(405);
    const watch = await h.http(
      'GET',
      `${METRICS}/namespaces/shop/pods?watch=true`,
    );
    expect(watch.status).toBe(405);
  });
});
