import {
  AppsV1Api,
  CoreV1Api,
  KubeConfig,
  V1PersistentVolumeClaim,
  V1StatefulSet,
} from '@kubernetes/client-node';
import { KubeObject, StoreEvent } from '../src';
import {
  consistently,
  eventually,
  expectNoDiscoveryWarnings,
  namespace,
  pvc,
  SimHarness,
  startHarness,
  statefulSet,
} from './helpers';

jest.setTimeout(30000);

const TIME_FACTOR = 0.01; // a 10 s grace period takes 100 ms

const storageClass = (
  name: string,
  reclaimPolicy: 'Delete' | 'Retain',
  isDefault = false,
): KubeObject => ({
  apiVersion: 'storage.k8s.io/v1',
  kind: 'StorageClass',
  metadata: {
    name,
    ...(isDefault
      ? {
          annotations: {
            'storageclass.kubernetes.io/is-default-class': 'true',
          },
        }
      : {}),
  } as KubeObject['metadata'],
  provisioner: 'sim.csi.k8s.io',
  reclaimPolicy,
  volumeBindingMode: 'Immediate',
});

/** Records every committed change, to assert the order in which things happened. */
function recorder(h: SimHarness) {
  const events: StoreEvent[] = [];
  const stop = h.sim.store.subscribe(e => events.push(e));
  const indexOf = (type: string, resource: string, name: string) =>
    events.findIndex(
      e =>
        e.type === type &&
        e.resource === resource &&
        e.object.metadata.name === name,
    );
  return { events, stop, indexOf };
}

describe('controllers', () => {
  let h: SimHarness;
  let core: CoreV1Api;
  let apps: AppsV1Api;

  const get = (resource: string, ns: string | undefined, name: string) =>
    h.sim.store.get(resource, ns, name);
  const pod = (ns: string, name: string) => get('pods', ns, name);
  const claim = (ns: string, name: string) =>
    get('persistentvolumeclaims', ns, name);
  const running = (ns: string, name: string) => {
    const p = pod(ns, name);
    return (
      p?.status?.phase === 'Running' &&
      !p.metadata.deletionTimestamp &&
      p.status.conditions?.some(
        (c: any) => c.type === 'Ready' && c.status === 'True',
      )
    );
  };
  const bound = (ns: string, name: string) => {
    const c = claim(ns, name);
    return (
      c?.status?.phase === 'Bound' &&
      !!c.spec.volumeName &&
      get('persistentvolumes', undefined, c.spec.volumeName)?.status?.phase ===
        'Bound'
    );
  };

  async function createStatefulSet(ns: string, name: string, replicas: number) {
    h.sim.store.create('namespaces', namespace(ns));
    await apps.createNamespacedStatefulSet({
      namespace: ns,
      body: statefulSet(name, ns, { replicas }) as unknown as V1StatefulSet,
    });
    await eventually(
      () =>
        [...Array(replicas).keys()].every(
          i => running(ns, `${name}-${i}`) && bound(ns, `data-${name}-${i}`),
        ),
      { message: `${name} pods running with bound claims` },
    );
  }

  beforeAll(async () => {
    h = await startHarness({
      timeFactor: TIME_FACTOR,
      scenario: [
        storageClass('standard', 'Delete', true),
        storageClass('keep', 'Retain'),
      ],
    });
    const kc = new KubeConfig();
    kc.loadFromString(h.sim.kubeconfig);
    core = kc.makeApiClient(CoreV1Api);
    apps = kc.makeApiClient(AppsV1Api);
  });

  afterAll(async () => {
    await h?.close();
  });

  it('scaling a StatefulSet down removes pods and leaves their PVCs bound', async () => {
    const ns = 'scale-down';
    await createStatefulSet(ns, 'web', 3);
    const volumes = [0, 1, 2].map(
      i => claim(ns, `data-web-${i}`)!.spec.volumeName,
    );

    const out = await h.kubectl([
      'scale',
      'sts',
      'web',
      '-n',
      ns,
      '--replicas=1',
    ]);
    expect([out.code, out.stdout.trim()]).toEqual([
      0,
      'statefulset.apps/web scaled',
    ]);
    expectNoDiscoveryWarnings(out.stderr);

    await eventually(() => !pod(ns, 'web-1') && !pod(ns, 'web-2'), {
      message: 'web-1 and web-2 gone',
    });
    expect(running(ns, 'web-0')).toBe(true);
    await eventually(
      () => get('apps/statefulsets', ns, 'web')?.status?.replicas === 1,
      { message: 'status.replicas 1' },
    );
    await consistently(
      () =>
        [0, 1, 2].every(
          i =>
            bound(ns, `data-web-${i}`) &&
            !claim(ns, `data-web-${i}`)!.metadata.deletionTimestamp,
        ),
      300,
      'every claim stays bound',
    );
    expect(
      [0, 1, 2].map(i => claim(ns, `data-web-${i}`)!.spec.volumeName),
    ).toEqual(volumes);

    // kubectl sees the same thing
    const claims = await h.kubectl(['get', 'pvc', '-n', ns, '-o', 'name']);
    expect(claims.stdout.trim().split('\n')).toEqual(
      [0, 1, 2].map(i => `persistentvolumeclaim/data-web-${i}`),
    );
    const pods = await h.kubectl(['get', 'pods', '-n', ns, '-o', 'name']);
    expect(pods.stdout.trim()).toBe('pod/web-0');

    // scaling back up reuses the retained claims
    await apps.patchNamespacedStatefulSetScale({
      namespace: ns,
      name: 'web',
      body: [{ op: 'replace', path: '/spec/replicas', value: 3 }],
    });
    await eventually(() => running(ns, 'web-1') && running(ns, 'web-2'), {
      message: 'pods back',
    });
    expect(
      [0, 1, 2].map(i => claim(ns, `data-web-${i}`)!.spec.volumeName),
    ).toEqual(volumes);
  });

  it('a PVC deleted while its pod exists stays until the pod is gone', async () => {
    const ns = 'in-use';
    await createStatefulSet(ns, 'db', 1);
    const volumeName = claim(ns, 'data-db-0')!.spec.volumeName;
    const rec = recorder(h);
    try {
      await core.deleteNamespacedPersistentVolumeClaim({
        namespace: ns,
        name: 'data-db-0',
      });
      const marked = claim(ns, 'data-db-0');
      expect(marked?.metadata.deletionTimestamp).toBeTruthy();
      expect(marked?.metadata.finalizers).toContain(
        'kubernetes.io/pvc-protection',
      );
      await consistently(
        () => !!claim(ns, 'data-db-0') && !!pod(ns, 'db-0'),
        400,
        'claim held while its pod runs',
      );

      const kubectlView = await h.kubectl([
        'get',
        'pvc',
        'data-db-0',
        '-n',
        ns,
      ]);
      expect(kubectlView.stdout.split('\n')[1]).toMatch(
        /^data-db-0\s+Terminating\s/,
      );

      // scale the pod away (deleting it alone would have the StatefulSet recreate it)
      const out = await h.kubectl([
        'scale',
        'sts',
        'db',
        '-n',
        ns,
        '--replicas=0',
      ]);
      expect(out.code).toBe(0);
      await eventually(() => !claim(ns, 'data-db-0'), {
        message: 'claim gone',
      });
      expect(pod(ns, 'db-0')).toBeUndefined();

      const podGone = rec.indexOf('DELETED', 'pods', 'db-0');
      const podTerminating = rec.events.findIndex(
        e =>
          e.resource === 'pods' &&
          e.object.metadata.name === 'db-0' &&
          e.object.metadata.deletionTimestamp,
      );
      const claimGone = rec.indexOf(
        'DELETED',
        'persistentvolumeclaims',
        'data-db-0',
      );
      expect(podTerminating).toBeGreaterThanOrEqual(0);
      expect(podGone).toBeGreaterThan(podTerminating);
      expect(claimGone).toBeGreaterThan(podGone);
      // Delete reclaim policy: the volume follows
      await eventually(() => !get('persistentvolumes', undefined, volumeName), {
        message: 'volume deleted',
      });
    } finally {
      rec.stop();
    }
  });

  it('a terminating pod keeps its claim until the pod object is removed', async () => {
    const ns = 'terminating';
    await createStatefulSet(ns, 'slow', 1);
    h.sim.pauseControllers();
    try {
      // the pod is deleted with a long grace period while the controllers are paused
      await core.deleteNamespacedPod({
        namespace: ns,
        name: 'slow-0',
        gracePeriodSeconds: 60,
      });
      await core.deleteNamespacedPersistentVolumeClaim({
        namespace: ns,
        name: 'data-slow-0',
      });
      await apps.patchNamespacedStatefulSetScale({
        namespace: ns,
        name: 'slow',
        body: [{ op: 'replace', path: '/spec/replicas', value: 0 }],
      });
    } finally {
      h.sim.resumeControllers();
    }
    const deleted = Date.now();
    expect(pod(ns, 'slow-0')?.metadata.deletionTimestamp).toBeTruthy();
    // 60 s × 0.01 = 600 ms of grace, during which the claim must stay
    while (pod(ns, 'slow-0')) {
      expect(claim(ns, 'data-slow-0')?.metadata.deletionTimestamp).toBeTruthy();
      expect(Date.now() - deleted).toBeLessThan(10000);
      await new Promise(resolve => setTimeout(resolve, 10));
    }
    expect(Date.now() - deleted).toBeGreaterThanOrEqual(400);
    await eventually(() => !claim(ns, 'data-slow-0'), {
      message: 'claim gone after the pod',
    });
  });

  it('reclaim: Delete removes the volume, Retain leaves it Released', async () => {
    const ns = 'reclaim';
    h.sim.store.create('namespaces', namespace(ns));
    await core.createNamespacedPersistentVolumeClaim({
      namespace: ns,
      body: pvc('deleted-volume', ns, {
        storageClassName: 'standard',
      }) as unknown as V1PersistentVolumeClaim,
    });
    await core.createNamespacedPersistentVolumeClaim({
      namespace: ns,
      body: pvc('kept-volume', ns, {
        storageClassName: 'keep',
      }) as unknown as V1PersistentVolumeClaim,
    });
    await eventually(
      () => bound(ns, 'deleted-volume') && bound(ns, 'kept-volume'),
      { message: 'both bound' },
    );
    const deletedPv = claim(ns, 'deleted-volume')!.spec.volumeName;
    const keptPv = claim(ns, 'kept-volume')!.spec.volumeName;
    expect(
      get('persistentvolumes', undefined, deletedPv)!.spec
        .persistentVolumeReclaimPolicy,
    ).toBe('Delete');
    expect(
      get('persistentvolumes', undefined, keptPv)!.spec
        .persistentVolumeReclaimPolicy,
    ).toBe('Retain');

    const del = await h.kubectl([
      'delete',
      'pvc',
      'deleted-volume',
      'kept-volume',
      '-n',
      ns,
    ]);
    expect(del.code).toBe(0);
    expect(del.stdout.trim().split('\n')).toEqual([
      'persistentvolumeclaim "deleted-volume" deleted',
      'persistentvolumeclaim "kept-volume" deleted',
    ]);
    expect(claim(ns, 'deleted-volume')).toBeUndefined();
    expect(claim(ns, 'kept-volume')).toBeUndefined();

    await eventually(() => !get('persistentvolumes', undefined, deletedPv), {
      message: 'Delete volume removed',
    });
    await eventually(
      () =>
        get('persistentvolumes', undefined, keptPv)?.status?.phase ===
        'Released',
      { message: 'Retain volume Released' },
    );
    await consistently(
      () =>
        get('persistentvolumes', undefined, keptPv)?.status?.phase ===
        'Released',
      300,
      'Retain volume stays',
    );
    const kept = get('persistentvolumes', undefined, keptPv)!;
    expect(kept.metadata.deletionTimestamp).toBeUndefined();
    expect(kept.spec.claimRef).toMatchObject({
      namespace: ns,
      name: 'kept-volume',
    });

    const table = await h.kubectl(['get', 'pv', keptPv]);
    expect(table.stdout.split('\n')[1]).toMatch(
      new RegExp(
        `^${keptPv}\\s+1Gi\\s+RWO\\s+Retain\\s+Released\\s+${ns}/kept-volume\\s+keep\\s`,
      ),
    );
  });

  it('Foreground deletion of a StatefulSet waits for its pods', async () => {
    const ns = 'foreground';
    await createStatefulSet(ns, 'fg', 2);
    const rec = recorder(h);
    try {
      const del = h.spawnKubectl([
        'delete',
        'sts',
        'fg',
        '-n',
        ns,
        '--cascade=foreground',
        '--timeout=20s',
      ]);
      await eventually(
        () => get('apps/statefulsets', ns, 'fg')?.metadata.deletionTimestamp,
        { message: 'marked for deletion' },
      );
      const marked = get('apps/statefulsets', ns, 'fg')!;
      expect(marked.metadata.finalizers).toContain('foregroundDeletion');
      expect(pod(ns, 'fg-0') ?? pod(ns, 'fg-1')).toBeDefined();

      const exit = await del.exited;
      expect(exit.code).toBe(0);
      expect(del.stdout().trim()).toBe('statefulset.apps "fg" deleted');
      expectNoDiscoveryWarnings(del.stderr());

      expect(get('apps/statefulsets', ns, 'fg')).toBeUndefined();
      expect(pod(ns, 'fg-0')).toBeUndefined();
      expect(pod(ns, 'fg-1')).toBeUndefined();
      const setGone = rec.indexOf('DELETED', 'apps/statefulsets', 'fg');
      expect(setGone).toBeGreaterThan(rec.indexOf('DELETED', 'pods', 'fg-0'));
      expect(setGone).toBeGreaterThan(rec.indexOf('DELETED', 'pods', 'fg-1'));
      expect(rec.indexOf('DELETED', 'pods', 'fg-0')).toBeGreaterThanOrEqual(0);
      // whenDeleted: Retain (the default) keeps the claims
      expect(bound(ns, 'data-fg-0') && bound(ns, 'data-fg-1')).toBe(true);
    } finally {
      rec.stop();
    }
  });

  it('Background deletion removes the StatefulSet at once and its pods after', async () => {
    const ns = 'background';
    await createStatefulSet(ns, 'bg', 2);
    const out = await h.kubectl([
      'delete',
      'sts',
      'bg',
      '-n',
      ns,
      '--wait=false',
    ]);
    expect(out.code).toBe(0);
    expect(get('apps/statefulsets', ns, 'bg')).toBeUndefined();
    await eventually(() => !pod(ns, 'bg-0') && !pod(ns, 'bg-1'), {
      message: 'pods garbage-collected',
    });
    expect(claim(ns, 'data-bg-0')).toBeDefined();
  });

  it('Orphan deletion leaves the pods, without owner references', async () => {
    const ns = 'orphan';
    await createStatefulSet(ns, 'or', 1);
    const out = await h.kubectl([
      'delete',
      'sts',
      'or',
      '-n',
      ns,
      '--cascade=orphan',
    ]);
    expect(out.code).toBe(0);
    expect(get('apps/statefulsets', ns, 'or')).toBeUndefined();
    await eventually(
      () =>
        pod(ns, 'or-0') && !pod(ns, 'or-0')!.metadata.ownerReferences?.length,
      { message: 'pod orphaned' },
    );
    await consistently(
      () => running(ns, 'or-0'),
      300,
      'orphaned pod keeps running',
    );
  });

  it('pausing the controllers over HTTP freezes provisioning until resumed', async () => {
    const ns = 'paused';
    h.sim.store.create('namespaces', namespace(ns));
    expect((await h.http('POST', '/_sim/controllers/pause')).json()).toEqual({
      controllers: 'paused',
    });
    try {
      await core.createNamespacedPersistentVolumeClaim({
        namespace: ns,
        body: pvc('waits', ns) as unknown as V1PersistentVolumeClaim,
      });
      expect(claim(ns, 'waits')!.spec.storageClassName).toBe('standard'); // the default class, by admission
      await consistently(
        () =>
          claim(ns, 'waits')?.status?.phase === 'Pending' &&
          !claim(ns, 'waits')!.spec.volumeName,
        300,
        'claim stays Pending',
      );
    } finally {
      expect((await h.http('POST', '/_sim/controllers/resume')).json()).toEqual(
        { controllers: 'running' },
      );
    }
    await eventually(() => bound(ns, 'waits'), {
      message: 'bound after resume',
    });
  });
});

describe('the demo scenario', () => {
  let h: SimHarness;

  beforeAll(async () => {
    h = await startHarness({ scenario: 'demo', timeFactor: TIME_FACTOR });
  });

  afterAll(async () => {
    await h?.close();
  });

  it('loads and converges', async () => {
    const store = h.sim.store;
    const runningPods = (ns: string, prefix: string) =>
      store
        .list('pods', { namespace: ns })
        .items.filter(
          p =>
            p.metadata.name.startsWith(prefix) &&
            p.status?.phase === 'Running' &&
            !p.metadata.deletionTimestamp,
        )
        .map(p => p.metadata.name)
        .sort();
    const isBound = (ns: string, name: string) =>
      store.get('persistentvolumeclaims', ns, name)?.status?.phase === 'Bound';

    await eventually(
      () =>
        runningPods('shop', 'orders-db-').length === 2 &&
        runningPods('shop', 'cart-cache-').length === 3 &&
        runningPods('shop', 'cart-sessions-').length === 2 &&
        store.get('apps/statefulsets', 'shop', 'cart-sessions')?.status
          ?.readyReplicas === 2 &&
        runningPods('search', 'search-index-').length === 2 &&
        store.get('apps/statefulsets', 'shop', 'orders-db')?.status
          ?.readyReplicas === 2,
      { message: 'demo workloads running' },
    );
    expect(runningPods('shop', 'orders-db-')).toEqual([
      'orders-db-0',
      'orders-db-1',
    ]);
    expect(
      store.list('pods', { namespace: 'shop' }).items.map(p => p.metadata.name),
    ).not.toContain('orders-db-2');

    const orphans = [
      'data-orders-db-2',
      'data-orders-db-3',
      'data-orders-db-4',
      'wal-orders-db-2',
      'wal-orders-db-3',
    ];
    await eventually(
      () =>
        [
          ...orphans,
          'data-orders-db-0',
          'wal-orders-db-1',
          'data-orders-db-backup',
        ].every(n => isBound('shop', n)),
      {
        message: 'shop claims bound',
      },
    );
    await eventually(
      () =>
        ['data-search-index-2', 'data-search-index-3'].every(n =>
          isBound('search', n),
        ),
      { message: 'search claims bound' },
    );
    for (const name of orphans) {
      const c = store.get('persistentvolumeclaims', 'shop', name)!;
      expect(c.metadata.deletionTimestamp).toBeUndefined();
      expect(
        store.get('persistentvolumes', undefined, c.spec.volumeName)?.status
          ?.phase,
      ).toBe('Bound');
    }
    const retained = store.get(
      'persistentvolumeclaims',
      'search',
      'data-search-index-2',
    )!;
    expect(
      store.get('persistentvolumes', undefined, retained.spec.volumeName)!.spec
        .persistentVolumeReclaimPolicy,
    ).toBe('Retain');

    const sts = await h.kubectl(['get', 'sts', '-A']);
    expect(sts.code).toBe(0);
    expectNoDiscoveryWarnings(sts.stderr);
    const rows = sts.stdout
      .trim()
      .split('\n')
      .slice(1)
      .map(l => l.split(/\s+/).slice(0, 3));
    expect(rows).toEqual([
      ['payments', 'ledger-db', '1/1'],
      ['search', 'nightly-reports', '1/1'],
      ['search', 'search-index', '2/2'],
      ['shop', 'cart-analytics', '0/0'],
      ['shop', 'cart-cache', '3/3'],
      ['shop', 'cart-sessions', '2/2'],
      ['shop', 'orders-db', '2/2'],
    ]);
    const hpas = await h.kubectl(['get', 'hpa', '-n', 'shop', '--no-headers']);
    expect(
      hpas.stdout
        .trim()
        .split(/\s{2,}/)
        .slice(0, 5),
    ).toEqual([
      'cart-sessions',
      'StatefulSet/cart-sessions',
      'cpu: <unknown>/70%',
      '2',
      '5',
    ]);
    const pvcs = await h.kubectl([
      'get',
      'pvc',
      '-n',
      'shop',
      '-l',
      'backstage.io/kubernetes-id=orders',
      '-o',
      'name',
    ]);
    expect(pvcs.stdout.trim().split('\n')).toEqual(
      expect.arrayContaining(orphans.map(n => `persistentvolumeclaim/${n}`)),
    );
    await eventually(() => h.sim.controllersIdle(), {
      message: 'controllers idle',
    });
  });

  it("reclaims the Retain volumes of search-index's left-behind claims once they are pruned and patched to Delete", async () => {
    const store = h.sim.store;
    const left = ['data-search-index-2', 'data-search-index-3'];
    await eventually(
      () =>
        left.every(
          n =>
            store.get('persistentvolumeclaims', 'search', n)?.status?.phase ===
            'Bound',
        ),
      { message: 'search claims bound' },
    );
    const volumes = left.map(
      n => store.get('persistentvolumeclaims', 'search', n)!.spec.volumeName,
    );
    const kept = store.get(
      'persistentvolumeclaims',
      'search',
      'data-search-index-0',
    )!.spec.volumeName;
    const phase = (pv: string) =>
      store.get('persistentvolumes', undefined, pv)?.status?.phase;
    const listed = async () => {
      const result = await h.kubectl(['get', 'pv', '-o', 'name']);
      expect(result.code).toBe(0);
      return result.stdout.trim().split('\n');
    };

    // The prune: the claims go, their Retain volumes stay Released (still billed).
    expect(
      (await h.kubectl(['delete', 'pvc', '-n', 'search', ...left])).code,
    ).toBe(0);
    await eventually(() => volumes.every(pv => phase(pv) === 'Released'), {
      message: 'volumes released',
    });
    expect(await listed()).toEqual(
      expect.arrayContaining(volumes.map(pv => `persistentvolume/${pv}`)),
    );

    // The reclaim: the provisioner deletes them; the live StatefulSet's volume is untouched.
    for (const pv of volumes) {
      const patched = await h.kubectl([
        'patch',
        'pv',
        pv,
        '-p',
        '{"spec":{"persistentVolumeReclaimPolicy":"Delete"}}',
      ]);
      expect(patched.stdout.trim()).toBe(`persistentvolume/${pv} patched`);
    }
    await eventually(
      async () => {
        const names = await listed();
        return volumes.every(pv => !names.includes(`persistentvolume/${pv}`));
      },
      { message: 'reclaimed volumes gone from kubectl get pv' },
    );
    expect(await listed()).toContain(`persistentvolume/${kept}`);
    expect(phase(kept)).toBe('Bound');
  });
});
