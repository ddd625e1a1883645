import {
  ApiException,
  AppsV1Api,
  CoreV1Api,
  KubeConfig,
  makeInformer,
  PatchStrategy,
  setHeaderOptions,
  V1PersistentVolumeClaim,
  Watch,
} from '@kubernetes/client-node';
import { KubeObject } from '../src';
import {
  eventually,
  namespace,
  pvc,
  SimHarness,
  sleep,
  startHarness,
  statefulSet,
} from './helpers';

jest.setTimeout(30000);

/** Status body of a failed client-node call. */
function statusOf(e: unknown): {
  code: number;
  reason: string;
  message: string;
  kind: string;
} {
  expect(e).toBeInstanceOf(ApiException);
  const err = e as ApiException<string>;
  const body = typeof err.body === 'string' ? JSON.parse(err.body) : err.body;
  expect(body.code).toBe(err.code);
  return body;
}

async function expectStatus(
  promise: Promise<unknown>,
  code: number,
  reason: string,
) {
  let caught: unknown;
  try {
    await promise;
  } catch (e) {
    caught = e;
  }
  expect(caught).toBeDefined();
  const status = statusOf(caught);
  expect({
    kind: status.kind,
    code: status.code,
    reason: status.reason,
  }).toEqual({ kind: 'Status', code, reason });
  return status;
}

/** A PVC as client-node's type. */
const claimBody = (...args: Parameters<typeof pvc>) =>
  pvc(...args) as unknown as V1PersistentVolumeClaim;

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

interface WatchEvent {
  type: string;
  object: any;
}

/** Starts a client-node Watch, collecting events; resolves `done` with the error (or null) it ends with. */
async function startWatch(
  kc: KubeConfig,
  path: string,
  query: Record<string, string | number | boolean | undefined>,
) {
  const events: WatchEvent[] = [];
  let finish: (err: any) => void = () => undefined;
  const done = new Promise<any>(resolve => {
    finish = resolve;
  });
  const controller = await new Watch(kc).watch(
    path,
    query,
    (type, object) => events.push({ type, object }),
    err => finish(err),
  );
  return { events, done, abort: () => controller.abort() };
}

describe('@kubernetes/client-node 1.4.0 against kube-sim', () => {
  let h: SimHarness;
  let kc: KubeConfig;
  let core: CoreV1Api;
  let apps: AppsV1Api;

  beforeAll(async () => {
    h = await startHarness({ controllers: false, bookmarkIntervalMs: 100 });
    kc = new KubeConfig();
    kc.loadFromString(h.sim.kubeconfig);
    core = kc.makeApiClient(CoreV1Api);
    apps = kc.makeApiClient(AppsV1Api);
  });

  afterAll(async () => {
    await h?.close();
  });

  describe('paginated lists with selectors', () => {
    const NS = 'paging';
    const seeded: Array<{ name: string; labels: Record<string, string> }> = [];

    beforeAll(() => {
      h.sim.store.create('namespaces', namespace(NS));
      h.sim.store.create('namespaces', namespace('paging-other'));
      for (let i = 0; i < 120; i++) {
        const labels: Record<string, string> = {};
        if (i % 10 !== 9) labels.app = ['a', 'b', 'c'][i % 3];
        if (i % 2 === 0) labels.tier = 'gold';
        const name = `claim-${String(i).padStart(3, '0')}`;
        seeded.push({ name, labels });
        h.sim.store.create('persistentvolumeclaims', pvc(name, NS, { labels }));
      }
      // same labels in another namespace: must never leak into namespaced lists
      for (let i = 0; i < 5; i++) {
        h.sim.store.create(
          'persistentvolumeclaims',
          pvc(`claim-${String(i).padStart(3, '0')}`, 'paging-other', {
            labels: { app: 'a', tier: 'gold' },
          }),
        );
      }
    });

    async function listAll(params: {
      labelSelector?: string;
      fieldSelector?: string;
      limit: number;
    }) {
      const pages: V1PersistentVolumeClaim[][] = [];
      const versions: string[] = [];
      let token: string | undefined;
      do {
        const page = await core.listNamespacedPersistentVolumeClaim({
          namespace: NS,
          ...params,
          _continue: token,
        });
        pages.push(page.items);
        versions.push(page.metadata!.resourceVersion!);
        token = page.metadata?._continue;
        expect(pages.length).toBeLessThan(50);
      } while (token);
      return {
        pages,
        versions,
        names: pages.flat().map(p => p.metadata!.name!),
      };
    }

    it('pages through 120 claims with limit 50: 50 + 50 + 20, in order, no duplicates', async () => {
      const first = await core.listNamespacedPersistentVolumeClaim({
        namespace: NS,
        limit: 50,
      });
      expect(first.items).toHaveLength(50);
      expect(first.metadata?._continue).toBeTruthy();

      const second = await core.listNamespacedPersistentVolumeClaim({
        namespace: NS,
        limit: 50,
        _continue: first.metadata!._continue,
      });
      expect(second.items).toHaveLength(50);
      expect(second.metadata?._continue).toBeTruthy();
      expect(second.metadata?._continue).not.toBe(first.metadata?._continue);

      const third = await core.listNamespacedPersistentVolumeClaim({
        namespace: NS,
        limit: 50,
        _continue: second.metadata!._continue,
      });
      expect(third.items).toHaveLength(20);
      expect(third.metadata?._continue).toBeFalsy();

      const names = [...first.items, ...second.items, ...third.items].map(
        p => p.metadata!.name!,
      );
      expect(new Set(names).size).toBe(120);
      expect(names).toEqual(seeded.map(s => s.name));
      expect(names).toEqual([...names].sort());
      expect(
        [...first.items, ...second.items, ...third.items].every(
          p => p.metadata?.namespace === NS,
        ),
      ).toBe(true);
      // every page is served at the version of the first
      expect(second.metadata?.resourceVersion).toBe(
        first.metadata?.resourceVersion,
      );
      expect(third.metadata?.resourceVersion).toBe(
        first.metadata?.resourceVersion,
      );
    });

    it('a list without limit returns everything with no continue token', async () => {
      const all = await core.listNamespacedPersistentVolumeClaim({
        namespace: NS,
      });
      expect(all.items).toHaveLength(120);
      expect(all.metadata?._continue).toBeFalsy();
      expect(all.metadata?.resourceVersion).toBe(h.sim.store.resourceVersion);
    });

    const has = (l: Record<string, string>, k: string) =>
      Object.prototype.hasOwnProperty.call(l, k);
    const SELECTORS: Array<[string, (l: Record<string, string>) => boolean]> = [
      ['app=a', l => l.app === 'a'],
      ['app==b', l => l.app === 'b'],
      ['app!=a', l => l.app !== 'a'],
      ['app in (a,b)', l => l.app === 'a' || l.app === 'b'],
      ['app in (a, c)', l => l.app === 'a' || l.app === 'c'],
      ['app notin (a,b)', l => !(l.app === 'a' || l.app === 'b')],
      ['tier', l => has(l, 'tier')],
      ['!tier', l => !has(l, 'tier')],
      ['!app', l => !has(l, 'app')],
      ['app=a,tier', l => l.app === 'a' && has(l, 'tier')],
      ['app notin (c),!tier', l => l.app !== 'c' && !has(l, 'tier')],
      [
        'tier=gold,app!=b,app',
        l => l.tier === 'gold' && l.app !== 'b' && has(l, 'app'),
      ],
      ['app=z', () => false],
    ];

    it.each(SELECTORS)(
      'labelSelector %p matches exactly what Kubernetes would, across pages of 17',
      async (selector, predicate) => {
        const expected = seeded
          .filter(s => predicate(s.labels))
          .map(s => s.name);
        const { names, pages, versions } = await listAll({
          labelSelector: selector,
          limit: 17,
        });
        expect(names).toEqual(expected);
        expect(new Set(names).size).toBe(names.length);
        expect(pages.slice(0, -1).every(p => p.length === 17)).toBe(true);
        expect(pages.length).toBe(Math.max(1, Math.ceil(expected.length / 17)));
        expect(new Set(versions).size).toBe(1);
      },
    );

    it('rejects a malformed label selector with 400', async () => {
      await expectStatus(
        core.listNamespacedPersistentVolumeClaim({
          namespace: NS,
          labelSelector: 'app in (a',
        }),
        400,
        'BadRequest',
      );
      await expectStatus(
        core.listNamespacedPersistentVolumeClaim({
          namespace: NS,
          labelSelector: 'app=a=b',
        }),
        400,
        'BadRequest',
      );
    });

    it('fieldSelector metadata.name and metadata.namespace', async () => {
      const one = await core.listNamespacedPersistentVolumeClaim({
        namespace: NS,
        fieldSelector: 'metadata.name=claim-007',
      });
      expect(one.items.map(i => i.metadata!.name)).toEqual(['claim-007']);

      const doubleEq = await core.listNamespacedPersistentVolumeClaim({
        namespace: NS,
        fieldSelector: 'metadata.name==claim-008',
      });
      expect(doubleEq.items.map(i => i.metadata!.name)).toEqual(['claim-008']);

      const notOne = await listAll({
        fieldSelector: 'metadata.name!=claim-007',
        limit: 50,
      });
      expect(notOne.names).toEqual(
        seeded.map(s => s.name).filter(n => n !== 'claim-007'),
      );

      const both = await core.listNamespacedPersistentVolumeClaim({
        namespace: NS,
        fieldSelector: 'metadata.name=claim-007',
        labelSelector: 'tier',
      });
      expect(both.items).toEqual([]);

      const inNs = await core.listPersistentVolumeClaimForAllNamespaces({
        fieldSelector: `metadata.namespace=${NS}`,
      });
      expect(inNs.items).toHaveLength(120);
      expect(inNs.items.every(i => i.metadata?.namespace === NS)).toBe(true);

      const notNs = await core.listPersistentVolumeClaimForAllNamespaces({
        fieldSelector: `metadata.namespace!=${NS}`,
        labelSelector: 'app=a',
      });
      expect(
        notNs.items.map(i => `${i.metadata!.namespace}/${i.metadata!.name}`),
      ).toEqual([0, 1, 2, 3, 4].map(i => `paging-other/claim-00${i}`));

      // across namespaces, items come in etcd key order (namespace/name): 'paging-other/' sorts before 'paging/'
      const pagedAcross = await core.listPersistentVolumeClaimForAllNamespaces({
        fieldSelector: 'metadata.name=claim-001',
        limit: 1,
      });
      expect(pagedAcross.items.map(i => i.metadata!.namespace)).toEqual([
        'paging-other',
      ]);
      const rest = await core.listPersistentVolumeClaimForAllNamespaces({
        fieldSelector: 'metadata.name=claim-001',
        limit: 1,
        _continue: pagedAcross.metadata!._continue,
      });
      expect(rest.items.map(i => i.metadata!.namespace)).toEqual([NS]);
      expect(rest.metadata?._continue).toBeFalsy();

      await expectStatus(
        core.listNamespacedPersistentVolumeClaim({
          namespace: NS,
          fieldSelector: 'spec.volumeName=x',
        }),
        400,
        'BadRequest',
      );
    });

    it('continue pages are a consistent snapshot at the first page’s resourceVersion', async () => {
      // kube-apiserver serves later pages at the first page's resourceVersion: objects
      // created or deleted after the first page neither appear nor disappear.
      const first = await core.listNamespacedPersistentVolumeClaim({
        namespace: NS,
        limit: 50,
      });
      h.sim.store.create('persistentvolumeclaims', pvc('claim-0605', NS));
      const doomed = h.sim.store.get(
        'persistentvolumeclaims',
        NS,
        'claim-070',
      )!;
      h.sim.store.update('persistentvolumeclaims', {
        ...doomed,
        metadata: { ...doomed.metadata, finalizers: [] },
      });
      h.sim.store.delete('persistentvolumeclaims', NS, 'claim-070');
      try {
        const second = await core.listNamespacedPersistentVolumeClaim({
          namespace: NS,
          limit: 50,
          _continue: first.metadata!._continue,
        });
        const names = second.items.map(i => i.metadata!.name);
        expect(names).not.toContain('claim-0605');
        expect(names).toContain('claim-070');
      } finally {
        h.sim.store.create(
          'persistentvolumeclaims',
          pvc('claim-070', NS, { labels: seeded[70].labels }),
        );
        const extra = h.sim.store.get(
          'persistentvolumeclaims',
          NS,
          'claim-0605',
        )!;
        h.sim.store.update('persistentvolumeclaims', {
          ...extra,
          metadata: { ...extra.metadata, finalizers: [] },
        });
        h.sim.store.delete('persistentvolumeclaims', NS, 'claim-0605');
      }
    });

    it('rejects a malformed continue token with 400', async () => {
      await expectStatus(
        core.listNamespacedPersistentVolumeClaim({
          namespace: NS,
          limit: 5,
          _continue: 'not-a-token',
        }),
        400,
        'BadRequest',
      );
    });
  });

  describe('watch', () => {
    const NS = 'replay';

    beforeAll(() => {
      h.sim.store.create('namespaces', namespace(NS));
    });

    it('replays exactly the events after a resourceVersion, in order, then continues live', async () => {
      await core.createNamespacedPersistentVolumeClaim({
        namespace: NS,
        body: claimBody('r1', NS),
      });
      const rv0 = (
        await core.listNamespacedPersistentVolumeClaim({ namespace: NS })
      ).metadata!.resourceVersion!;

      await core.createNamespacedPersistentVolumeClaim({
        namespace: NS,
        body: claimBody('r2', NS),
      });
      await core.patchNamespacedPersistentVolumeClaim(
        {
          namespace: NS,
          name: 'r1',
          body: { metadata: { labels: { step: 'two' } } },
        },
        mergePatch,
      );
      h.sim.store.create('persistentvolumeclaims', pvc('elsewhere', 'default')); // another namespace: not in this watch
      await core.deleteNamespacedPersistentVolumeClaim({
        namespace: NS,
        name: 'r2',
      }); // pvc-protection keeps it: MODIFIED
      await core.patchNamespacedPersistentVolumeClaim({
        namespace: NS,
        name: 'r2',
        body: [{ op: 'remove', path: '/metadata/finalizers' }],
      }); // DELETED

      const watch = await startWatch(
        kc,
        `/api/v1/namespaces/${NS}/persistentvolumeclaims`,
        { resourceVersion: rv0 },
      );
      try {
        await eventually(() => watch.events.length >= 4, {
          message: 'replayed events',
        });
        await sleep(250);
        const summary = watch.events.map(e => [e.type, e.object.metadata.name]);
        expect(summary).toEqual([
          ['ADDED', 'r2'],
          ['MODIFIED', 'r1'],
          ['MODIFIED', 'r2'],
          ['DELETED', 'r2'],
        ]);
        expect(watch.events[1].object.metadata.labels).toEqual({ step: 'two' });
        expect(watch.events[2].object.metadata.deletionTimestamp).toBeTruthy();
        const rvs = watch.events.map(e =>
          Number(e.object.metadata.resourceVersion),
        );
        expect(rvs[0]).toBeGreaterThan(Number(rv0));
        expect(rvs).toEqual([...rvs].sort((a, b) => a - b));
        expect(new Set(rvs).size).toBe(4);

        // live events follow the replay
        await core.createNamespacedPersistentVolumeClaim({
          namespace: NS,
          body: claimBody('r3', NS),
        });
        await eventually(() => watch.events.length === 5, {
          message: 'live event',
        });
        expect([
          watch.events[4].type,
          watch.events[4].object.metadata.name,
        ]).toEqual(['ADDED', 'r3']);
        expect(
          Number(watch.events[4].object.metadata.resourceVersion),
        ).toBeGreaterThan(rvs[3]);

        // replay from the middle: only what came after that version
        const middle = await startWatch(
          kc,
          `/api/v1/namespaces/${NS}/persistentvolumeclaims`,
          { resourceVersion: String(rvs[1]) },
        );
        await eventually(() => middle.events.length >= 3, {
          message: 'replay from the middle',
        });
        await sleep(200);
        middle.abort();
        expect(
          middle.events.map(e => [e.type, e.object.metadata.name]),
        ).toEqual([
          ['MODIFIED', 'r2'],
          ['DELETED', 'r2'],
          ['ADDED', 'r3'],
        ]);
      } finally {
        watch.abort();
      }
    });

    it('without a resourceVersion, a watch starts with the current objects as ADDED', async () => {
      const watch = await startWatch(
        kc,
        `/api/v1/namespaces/${NS}/persistentvolumeclaims`,
        { labelSelector: 'step=two' },
      );
      try {
        await eventually(() => watch.events.length >= 1);
        await sleep(150);
        expect(watch.events.map(e => [e.type, e.object.metadata.name])).toEqual(
          [['ADDED', 'r1']],
        );
      } finally {
        watch.abort();
      }
    });

    it('a fieldSelector watch sees only that object', async () => {
      const rv = h.sim.store.resourceVersion;
      const watch = await startWatch(
        kc,
        `/api/v1/namespaces/${NS}/persistentvolumeclaims`,
        { resourceVersion: rv, fieldSelector: 'metadata.name=r3' },
      );
      try {
        await core.createNamespacedPersistentVolumeClaim({
          namespace: NS,
          body: claimBody('r4', NS),
        });
        await core.patchNamespacedPersistentVolumeClaim(
          {
            namespace: NS,
            name: 'r3',
            body: { metadata: { labels: { seen: 'yes' } } },
          },
          mergePatch,
        );
        await eventually(() => watch.events.length >= 1);
        await sleep(150);
        expect(
          watch.events.map(e => [
            e.type,
            e.object.metadata.name,
            e.object.metadata.labels?.seen,
          ]),
        ).toEqual([['MODIFIED', 'r3', 'yes']]);
      } finally {
        watch.abort();
      }
    });

    it('sends BOOKMARK events with the current resourceVersion when allowed', async () => {
      const watch = await startWatch(
        kc,
        `/api/v1/namespaces/${NS}/persistentvolumeclaims`,
        {
          resourceVersion: h.sim.store.resourceVersion,
          allowWatchBookmarks: true,
        },
      );
      const plain = await startWatch(
        kc,
        `/api/v1/namespaces/${NS}/persistentvolumeclaims`,
        { resourceVersion: h.sim.store.resourceVersion },
      );
      try {
        await eventually(() => watch.events.some(e => e.type === 'BOOKMARK'), {
          message: 'a bookmark',
        });
        const bookmark = watch.events.find(e => e.type === 'BOOKMARK')!;
        expect(bookmark.object.kind).toBe('PersistentVolumeClaim');
        expect(bookmark.object.apiVersion).toBe('v1');
        expect(
          Number(bookmark.object.metadata.resourceVersion),
        ).toBeGreaterThanOrEqual(1);
        expect(
          Number(bookmark.object.metadata.resourceVersion),
        ).toBeLessThanOrEqual(Number(h.sim.store.resourceVersion));

        const created = await core.createNamespacedPersistentVolumeClaim({
          namespace: NS,
          body: claimBody('r5', NS),
        });
        const createdRv = Number(created.metadata!.resourceVersion);
        await eventually(
          () => {
            const i = watch.events.findIndex(
              e => e.type === 'ADDED' && e.object.metadata.name === 'r5',
            );
            return (
              i >= 0 &&
              watch.events.slice(i + 1).some(e => e.type === 'BOOKMARK')
            );
          },
          { message: 'a bookmark after the change' },
        );
        const later = watch.events.filter(e => e.type === 'BOOKMARK').pop()!;
        expect(
          Number(later.object.metadata.resourceVersion),
        ).toBeGreaterThanOrEqual(createdRv);
        // a watch that did not ask for bookmarks gets none
        expect(plain.events.map(e => e.type)).toEqual(['ADDED']);
      } finally {
        watch.abort();
        plain.abort();
      }
    });

    it('timeoutSeconds closes the watch cleanly', async () => {
      const started = Date.now();
      const watch = await startWatch(
        kc,
        `/api/v1/namespaces/${NS}/persistentvolumeclaims`,
        {
          resourceVersion: h.sim.store.resourceVersion,
          timeoutSeconds: 1,
        },
      );
      const err = await Promise.race([
        watch.done,
        sleep(5000).then(() => 'still open'),
      ]);
      const elapsed = Date.now() - started;
      expect(err).toBeNull();
      expect(elapsed).toBeGreaterThanOrEqual(900);
      expect(elapsed).toBeLessThan(3000);
    });

    it('an informer lists, then follows adds and deletes', async () => {
      const informer = makeInformer(
        kc,
        `/api/v1/namespaces/${NS}/persistentvolumeclaims`,
        () =>
          core.listNamespacedPersistentVolumeClaim({
            namespace: NS,
            labelSelector: 'informed=yes',
          }),
        'informed=yes',
      );
      const seen: string[] = [];
      informer.on('add', obj => seen.push(`add ${obj.metadata!.name}`));
      informer.on('delete', obj => seen.push(`delete ${obj.metadata!.name}`));
      const errors: unknown[] = [];
      informer.on('error', err => errors.push(err));
      h.sim.store.create(
        'persistentvolumeclaims',
        pvc('inf-1', NS, { labels: { informed: 'yes' } }),
      );
      await informer.start();
      try {
        await eventually(() => seen.includes('add inf-1'));
        h.sim.store.create(
          'persistentvolumeclaims',
          pvc('inf-2', NS, { labels: { informed: 'yes' } }),
        );
        h.sim.store.create('persistentvolumeclaims', pvc('inf-unlabelled', NS));
        await eventually(() => seen.includes('add inf-2'));
        await core.deleteNamespacedPersistentVolumeClaim({
          namespace: NS,
          name: 'inf-1',
        });
        await core.patchNamespacedPersistentVolumeClaim({
          namespace: NS,
          name: 'inf-1',
          body: [{ op: 'remove', path: '/metadata/finalizers' }],
        });
        await eventually(() => seen.includes('delete inf-1'));
        expect(seen).toEqual(['add inf-1', 'add inf-2', 'delete inf-1']);
        expect(
          informer
            .list(NS)
            .map(o => o.metadata!.name)
            .sort(),
        ).toEqual(['inf-2']);
        expect(errors).toEqual([]);
      } finally {
        await informer.stop();
      }
    });
  });

  describe('410 Expired after compaction', () => {
    it('a watch from a compacted resourceVersion gets 200 and one ERROR event: Status 410 Expired, too old resource version', async () => {
      const oldRv = h.sim.store.resourceVersion;
      h.sim.store.create(
        'persistentvolumeclaims',
        pvc('after-old-rv', 'default'),
      );
      h.sim.compact();
      const compactedAt = h.sim.store.resourceVersion;
      h.sim.store.create(
        'persistentvolumeclaims',
        pvc('after-compaction', 'default'),
      );
      const watch = await startWatch(
        kc,
        '/api/v1/namespaces/default/persistentvolumeclaims',
        { resourceVersion: oldRv },
      );
      const err = await Promise.race([
        watch.done,
        sleep(3000).then(() => 'no end'),
      ]);
      watch.abort();
      // As kube-apiserver (watch cache and etcd3 watcher alike): the stream opens, carries the Status, and ends.
      expect(err).toBeNull();
      expect(watch.events).toEqual([
        {
          type: 'ERROR',
          object: expect.objectContaining({
            kind: 'Status',
            code: 410,
            reason: 'Expired',
            message: `too old resource version: ${oldRv} (${compactedAt})`,
          }),
        },
      ]);
      // a watch from the current version still works
      const fresh = await startWatch(
        kc,
        '/api/v1/namespaces/default/persistentvolumeclaims',
        { resourceVersion: h.sim.store.resourceVersion },
      );
      h.sim.store.create(
        'persistentvolumeclaims',
        pvc('after-fresh-watch', 'default'),
      );
      await eventually(() => fresh.events.length === 1);
      fresh.abort();
      expect(fresh.events[0].object.metadata.name).toBe('after-fresh-watch');
    });

    it('a continue token from before compaction fails with 410 Expired', async () => {
      const page = await core.listNamespacedPersistentVolumeClaim({
        namespace: 'paging',
        limit: 10,
      });
      expect(page.metadata?._continue).toBeTruthy();
      h.sim.store.create(
        'persistentvolumeclaims',
        pvc('bump-version', 'default'),
      );
      h.sim.compact();
      const status = await expectStatus(
        core.listNamespacedPersistentVolumeClaim({
          namespace: 'paging',
          limit: 10,
          _continue: page.metadata!._continue,
        }),
        410,
        'Expired',
      );
      expect(status.message).toContain('continue');
    });
  });

  describe('writes', () => {
    const NS = 'writes';
    beforeAll(() => {
      h.sim.store.create('namespaces', namespace(NS));
    });

    it('delete with a stale resourceVersion or uid precondition is a 409 Conflict and deletes nothing', async () => {
      const created = await core.createNamespacedPersistentVolumeClaim({
        namespace: NS,
        body: claimBody('guarded', NS),
      });
      const staleRv = created.metadata!.resourceVersion!;
      await core.patchNamespacedPersistentVolumeClaim(
        {
          namespace: NS,
          name: 'guarded',
          body: { metadata: { labels: { touched: 'yes' } } },
        },
        mergePatch,
      );

      const byRv = await expectStatus(
        core.deleteNamespacedPersistentVolumeClaim({
          namespace: NS,
          name: 'guarded',
          body: { preconditions: { resourceVersion: staleRv } },
        }),
        409,
        'Conflict',
      );
      expect(byRv.message).toContain(
        'Precondition failed: ResourceVersion in precondition',
      );
      const byUid = await expectStatus(
        core.deleteNamespacedPersistentVolumeClaim({
          namespace: NS,
          name: 'guarded',
          body: {
            preconditions: { uid: '00000000-0000-0000-0000-000000000000' },
          },
        }),
        409,
        'Conflict',
      );
      expect(byUid.message).toContain(
        'Precondition failed: UID in precondition',
      );

      const still = await core.readNamespacedPersistentVolumeClaim({
        namespace: NS,
        name: 'guarded',
      });
      expect(still.metadata?.deletionTimestamp).toBeUndefined();
      expect(still.metadata?.uid).toBe(created.metadata?.uid);

      // the right preconditions delete (the finalizer keeps it, marked)
      await core.deleteNamespacedPersistentVolumeClaim({
        namespace: NS,
        name: 'guarded',
        body: {
          preconditions: {
            uid: still.metadata!.uid,
            resourceVersion: still.metadata!.resourceVersion,
          },
        },
      });
      expect(
        h.sim.store.get('persistentvolumeclaims', NS, 'guarded')?.metadata
          .deletionTimestamp,
      ).toBeTruthy();
    });

    it('an update with a stale resourceVersion is a 409 Conflict (optimistic concurrency)', async () => {
      const created = await core.createNamespacedPersistentVolumeClaim({
        namespace: NS,
        body: claimBody('occ', NS),
      });
      const patched = await core.patchNamespacedPersistentVolumeClaim(
        {
          namespace: NS,
          name: 'occ',
          body: { metadata: { labels: { writer: 'first' } } },
        },
        mergePatch,
      );
      expect(Number(patched.metadata!.resourceVersion)).toBeGreaterThan(
        Number(created.metadata!.resourceVersion),
      );

      const stale: V1PersistentVolumeClaim = {
        ...created,
        metadata: { ...created.metadata, labels: { writer: 'second' } },
      };
      const status = await expectStatus(
        core.replaceNamespacedPersistentVolumeClaim({
          namespace: NS,
          name: 'occ',
          body: stale,
        }),
        409,
        'Conflict',
      );
      expect(status.message).toBe(
        'Operation cannot be fulfilled on persistentvolumeclaims "occ": the object has been modified; please apply your changes to the latest version and try again',
      );
      expect(
        h.sim.store.get('persistentvolumeclaims', NS, 'occ')!.metadata.labels,
      ).toEqual({ writer: 'first' });

      // a merge patch carrying the stale resourceVersion is refused the same way
      await expectStatus(
        core.patchNamespacedPersistentVolumeClaim(
          {
            namespace: NS,
            name: 'occ',
            body: {
              metadata: {
                resourceVersion: created.metadata!.resourceVersion,
                labels: { writer: 'third' },
              },
            },
          },
          mergePatch,
        ),
        409,
        'Conflict',
      );

      const fresh = await core.readNamespacedPersistentVolumeClaim({
        namespace: NS,
        name: 'occ',
      });
      const replaced = await core.replaceNamespacedPersistentVolumeClaim({
        namespace: NS,
        name: 'occ',
        body: {
          ...fresh,
          metadata: { ...fresh.metadata, labels: { writer: 'second' } },
        },
      });
      expect(replaced.metadata?.labels).toEqual({ writer: 'second' });
      expect(Number(replaced.metadata!.resourceVersion)).toBeGreaterThan(
        Number(fresh.metadata!.resourceVersion),
      );
    });

    it('a StatefulSet scale with a stale resourceVersion is a 409 Conflict', async () => {
      await apps.createNamespacedStatefulSet({
        namespace: NS,
        body: statefulSet('scaled', NS) as any,
      });
      const scale = await apps.readNamespacedStatefulSetScale({
        namespace: NS,
        name: 'scaled',
      });
      expect(scale.spec?.replicas).toBe(1);
      const updated = await apps.replaceNamespacedStatefulSetScale({
        namespace: NS,
        name: 'scaled',
        body: { ...scale, spec: { replicas: 3 } },
      });
      expect(updated.spec?.replicas).toBe(3);
      expect(
        h.sim.store.get('apps/statefulsets', NS, 'scaled')!.spec.replicas,
      ).toBe(3);
      await expectStatus(
        apps.replaceNamespacedStatefulSetScale({
          namespace: NS,
          name: 'scaled',
          body: { ...scale, spec: { replicas: 0 } },
        }),
        409,
        'Conflict',
      );
      expect(
        h.sim.store.get('apps/statefulsets', NS, 'scaled')!.spec.replicas,
      ).toBe(3);
    });

    describe('dryRun=All changes nothing', () => {
      let before: KubeObject;
      let rv: string;

      beforeAll(async () => {
        await core.createNamespacedPersistentVolumeClaim({
          namespace: NS,
          body: claimBody('dry', NS, { labels: { state: 'original' } }),
        });
      });

      beforeEach(() => {
        before = h.sim.store.get('persistentvolumeclaims', NS, 'dry')!;
        rv = h.sim.store.resourceVersion;
      });

      /** Called at the end of every test below. */
      const expectNothingChanged = () => {
        expect(h.sim.store.get('persistentvolumeclaims', NS, 'dry')).toBe(
          before,
        );
        expect(h.sim.store.resourceVersion).toBe(rv);
      };

      it('create', async () => {
        const out = await core.createNamespacedPersistentVolumeClaim({
          namespace: NS,
          body: claimBody('dry-new', NS),
          dryRun: 'All',
        });
        expect(out.metadata?.name).toBe('dry-new');
        expect(out.metadata?.finalizers).toEqual([
          'kubernetes.io/pvc-protection',
        ]);
        expect(
          h.sim.store.get('persistentvolumeclaims', NS, 'dry-new'),
        ).toBeUndefined();
        await expectStatus(
          core.readNamespacedPersistentVolumeClaim({
            namespace: NS,
            name: 'dry-new',
          }),
          404,
          'NotFound',
        );
        expectNothingChanged();
      });

      it('update', async () => {
        const current = await core.readNamespacedPersistentVolumeClaim({
          namespace: NS,
          name: 'dry',
        });
        const out = await core.replaceNamespacedPersistentVolumeClaim({
          namespace: NS,
          name: 'dry',
          dryRun: 'All',
          body: {
            ...current,
            metadata: { ...current.metadata, labels: { state: 'replaced' } },
          },
        });
        expect(out.metadata?.labels).toEqual({ state: 'replaced' });
        expectNothingChanged();
      });

      it('patch', async () => {
        const out = await core.patchNamespacedPersistentVolumeClaim(
          {
            namespace: NS,
            name: 'dry',
            dryRun: 'All',
            body: { metadata: { labels: { state: 'patched' } } },
          },
          mergePatch,
        );
        expect(out.metadata?.labels).toEqual({ state: 'patched' });
        expectNothingChanged();
      });

      it('delete', async () => {
        await core.deleteNamespacedPersistentVolumeClaim({
          namespace: NS,
          name: 'dry',
          dryRun: 'All',
        });
        const after = await core.readNamespacedPersistentVolumeClaim({
          namespace: NS,
          name: 'dry',
        });
        expect(after.metadata?.deletionTimestamp).toBeUndefined();
        expectNothingChanged();
      });

      it('delete of a claim without finalizers', async () => {
        const bare = h.sim.store.create(
          'persistentvolumeclaims',
          pvc('dry-bare', NS),
        );
        h.sim.store.update('persistentvolumeclaims', {
          ...bare,
          metadata: { ...bare.metadata, finalizers: [] },
        });
        before = h.sim.store.get('persistentvolumeclaims', NS, 'dry')!;
        rv = h.sim.store.resourceVersion;
        await core.deleteNamespacedPersistentVolumeClaim({
          namespace: NS,
          name: 'dry-bare',
          dryRun: 'All',
        });
        expect(
          h.sim.store.get('persistentvolumeclaims', NS, 'dry-bare'),
        ).toBeDefined();
        expectNothingChanged();
      });

      it('scale', async () => {
        await apps.createNamespacedStatefulSet({
          namespace: NS,
          body: statefulSet('dry-sts', NS) as any,
        });
        before = h.sim.store.get('persistentvolumeclaims', NS, 'dry')!;
        rv = h.sim.store.resourceVersion;
        const scale = await apps.readNamespacedStatefulSetScale({
          namespace: NS,
          name: 'dry-sts',
        });
        const out = await apps.replaceNamespacedStatefulSetScale({
          namespace: NS,
          name: 'dry-sts',
          dryRun: 'All',
          body: { ...scale, spec: { replicas: 4 } },
        });
        expect(out.spec?.replicas).toBe(4);
        expect(
          h.sim.store.get('apps/statefulsets', NS, 'dry-sts')!.spec.replicas,
        ).toBe(1);
        expectNothingChanged();
      });

      it('rejects an unknown dryRun value with 400', async () => {
        await expectStatus(
          core.createNamespacedPersistentVolumeClaim({
            namespace: NS,
            body: claimBody('dry-bad', NS),
            dryRun: 'Some',
          }),
          400,
          'BadRequest',
        );
        expectNothingChanged();
      });
    });

    it('deleteCollection with a label selector deletes only the matching claims', async () => {
      h.sim.store.create('namespaces', namespace('collection'));
      for (const [name, group] of [
        ['c1', 'x'],
        ['c2', 'x'],
        ['c3', 'y'],
      ]) {
        h.sim.store.create(
          'persistentvolumeclaims',
          pvc(name, 'collection', { labels: { group } }),
        );
      }
      await core.deleteCollectionNamespacedPersistentVolumeClaim({
        namespace: 'collection',
        labelSelector: 'group=x',
      });
      const marked = (name: string) =>
        h.sim.store.get('persistentvolumeclaims', 'collection', name)?.metadata
          .deletionTimestamp;
      expect([marked('c1'), marked('c2'), marked('c3')].map(Boolean)).toEqual([
        true,
        true,
        false,
      ]);
    });
  });
});
