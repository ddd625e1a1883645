import { IncomingMessage, ServerResponse } from 'node:http';
import { startFakeApiServer } from '../__testUtils__/fakeApiServer';
import { ClusterRequestError, KubeGateway } from './KubeGateway';

/* The snapshot calls: the paths of snapshot.storage.k8s.io/v1, dryRun=All on a dry run's create, and the same caps as every answer. */

let stop: (() => Promise<void>) | undefined;
afterEach(async () => {
  await stop?.();
  stop = undefined;
});

type Seen = {
  method: string;
  path: string;
  query: string;
  body: string;
  contentType?: string;
};

async function gatewayTo(
  answer: (seen: Seen, res: ServerResponse) => void,
): Promise<{ gateway: KubeGateway; seen: Seen[] }> {
  const seen: Seen[] = [];
  const fake = await startFakeApiServer(
    (req: IncomingMessage, res: ServerResponse, url: URL) => {
      let body = '';
      req.on('data', chunk => {
        body += chunk;
      });
      req.on('end', () => {
        const one = {
          method: req.method!,
          path: url.pathname,
          query: url.search,
          body,
          contentType: req.headers['content-type'],
        };
        seen.push(one);
        answer(one, res);
      });
    },
  );
  stop = fake.close;
  return {
    gateway: new KubeGateway('fake', fake.connection, 5000, {
      limits: { objectBytes: 4096 },
    }),
    seen,
  };
}

const json = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};

const snapshot = {
  apiVersion: 'snapshot.storage.k8s.io/v1',
  kind: 'VolumeSnapshot',
  metadata: { name: 'data-web-3-x', namespace: 'shop' },
  spec: { source: { persistentVolumeClaimName: 'data-web-3' } },
};

describe('KubeGateway: VolumeSnapshots', () => {
  it('creates a snapshot in its namespace, with dryRun=All on a dry run', async () => {
    const { gateway, seen } = await gatewayTo((one, res) =>
      json(res, 201, JSON.parse(one.body)),
    );

    await gateway.createVolumeSnapshot('shop', snapshot, false);
    await gateway.createVolumeSnapshot('shop', snapshot, true);

    expect(seen.map(s => `${s.method} ${s.path}${s.query}`)).toEqual([
      'POST /apis/snapshot.storage.k8s.io/v1/namespaces/shop/volumesnapshots',
      'POST /apis/snapshot.storage.k8s.io/v1/namespaces/shop/volumesnapshots?dryRun=All',
    ]);
    expect(JSON.parse(seen[0].body)).toEqual(snapshot);
  });

  it('reads snapshots, contents, classes and StorageClasses where the API has them; a missing one is undefined', async () => {
    const { gateway, seen } = await gatewayTo((one, res) =>
      one.path.endsWith('/volumesnapshotclasses')
        ? json(res, 200, { items: [{ metadata: { name: 'csi' } }] })
        : json(res, 404, { kind: 'Status', reason: 'NotFound' }),
    );

    await expect(
      gateway.readVolumeSnapshot('shop', 'a'),
    ).resolves.toBeUndefined();
    await expect(
      gateway.readVolumeSnapshotContent('c'),
    ).resolves.toBeUndefined();
    await expect(gateway.readStorageClass('gp3')).resolves.toBeUndefined();
    await expect(gateway.listVolumeSnapshotClasses()).resolves.toEqual([
      { metadata: { name: 'csi' } },
    ]);
    expect(seen.map(s => s.path)).toEqual([
      '/apis/snapshot.storage.k8s.io/v1/namespaces/shop/volumesnapshots/a',
      '/apis/snapshot.storage.k8s.io/v1/volumesnapshotcontents/c',
      '/apis/storage.k8s.io/v1/storageclasses/gp3',
      '/apis/snapshot.storage.k8s.io/v1/volumesnapshotclasses',
    ]);
  });

  it('refuses an answer to a create larger than an object may be, naming the cluster', async () => {
    const { gateway } = await gatewayTo((_one, res) =>
      json(res, 201, { ...snapshot, padding: 'x'.repeat(8192) }),
    );

    const error = await gateway
      .createVolumeSnapshot('shop', snapshot, false)
      .catch(e => e);

    expect(error).toBeInstanceOf(ClusterRequestError);
    expect(error.message).toMatch(
      /^cluster "fake" sent an answer of more than 4 KiB for create volumesnapshot shop\/data-web-3-x/,
    );
  });

  it('says what refused a create, with its reason', async () => {
    const { gateway } = await gatewayTo((_one, res) =>
      json(res, 403, {
        kind: 'Status',
        reason: 'Forbidden',
        message: 'volumesnapshots is forbidden',
      }),
    );

    const error = await gateway
      .createVolumeSnapshot('shop', snapshot, false)
      .catch(e => e);

    expect(error).toMatchObject({ statusCode: 403, reason: 'Forbidden' });
    expect(error.message).toContain('volumesnapshots is forbidden');
  });

  it('lists snapshots by label cluster-wide or in a namespace, deletes one with its preconditions, and patches annotations by a merge patch carrying uid and resourceVersion', async () => {
    const { gateway, seen } = await gatewayTo((one, res) =>
      one.method === 'GET'
        ? json(res, 200, { metadata: {}, items: [snapshot] })
        : json(res, 200, snapshot),
    );

    expect(
      await gateway.listVolumeSnapshots(
        undefined,
        'app.kubernetes.io/managed-by=pvc-pruner',
      ),
    ).toEqual([snapshot]);
    await gateway.listVolumeSnapshots('shop', 'a=b');
    await gateway.deleteVolumeSnapshot('shop', 'data-web-3-x', { uid: 'u1' });
    await gateway.patchVolumeSnapshotAnnotations(
      'shop',
      'data-web-3-x',
      { uid: 'u1', resourceVersion: '41' },
      { 'pvc-pruner.backstage.io/keep-until': '2027-01-15T00:00:00.000Z' },
    );

    expect(seen.map(s => `${s.method} ${s.path}${s.query}`)).toEqual([
      'GET /apis/snapshot.storage.k8s.io/v1/volumesnapshots?labelSelector=app.kubernetes.io%2Fmanaged-by%3Dpvc-pruner&limit=500',
      'GET /apis/snapshot.storage.k8s.io/v1/namespaces/shop/volumesnapshots?labelSelector=a%3Db&limit=500',
      'DELETE /apis/snapshot.storage.k8s.io/v1/namespaces/shop/volumesnapshots/data-web-3-x',
      'PATCH /apis/snapshot.storage.k8s.io/v1/namespaces/shop/volumesnapshots/data-web-3-x',
    ]);
    expect(JSON.parse(seen[2].body)).toMatchObject({
      kind: 'DeleteOptions',
      preconditions: { uid: 'u1' },
    });
    expect(seen[3].contentType).toBe('application/merge-patch+json');
    expect(JSON.parse(seen[3].body)).toEqual({
      metadata: {
        uid: 'u1',
        resourceVersion: '41',
        annotations: {
          'pvc-pruner.backstage.io/keep-until': '2027-01-15T00:00:00.000Z',
        },
      },
    });
  });
});

describe('KubeGateway: listing snapshots and restoring a claim', () => {
  it('lists snapshots by label selector, in a namespace or in all, every page', async () => {
    const { gateway, seen } = await gatewayTo((one, res) => {
      const query = new URLSearchParams(one.query);
      if (query.get('continue'))
        json(res, 200, { items: [{ metadata: { name: 'b' } }], metadata: {} });
      else
        json(res, 200, {
          items: [{ metadata: { name: 'a' } }],
          metadata: { continue: 'next' },
        });
    });

    const names = (await gateway.listVolumeSnapshots('shop', 'x=y')).map(
      s => s.metadata?.name,
    );
    await gateway.listVolumeSnapshots(undefined, 'x=y');

    expect(names).toEqual(['a', 'b']);
    expect(seen.map(s => s.path)).toEqual([
      '/apis/snapshot.storage.k8s.io/v1/namespaces/shop/volumesnapshots',
      '/apis/snapshot.storage.k8s.io/v1/namespaces/shop/volumesnapshots',
      '/apis/snapshot.storage.k8s.io/v1/volumesnapshots',
      '/apis/snapshot.storage.k8s.io/v1/volumesnapshots',
    ]);
    expect(new URLSearchParams(seen[0].query).get('labelSelector')).toBe('x=y');
  });

  it('creates a claim in its namespace, and a 409 stays a ClusterRequestError with that status', async () => {
    let status = 201;
    const { gateway, seen } = await gatewayTo((one, res) =>
      json(
        res,
        status,
        status === 201
          ? JSON.parse(one.body)
          : { kind: 'Status', reason: 'AlreadyExists', message: 'exists' },
      ),
    );
    const claim = { metadata: { name: 'data-web-3' } };

    await expect(gateway.createClaim('shop', claim)).resolves.toEqual(claim);
    status = 409;
    const error = await gateway.createClaim('shop', claim).catch(e => e);

    expect(seen.map(s => `${s.method} ${s.path}`)).toEqual([
      'POST /api/v1/namespaces/shop/persistentvolumeclaims',
      'POST /api/v1/namespaces/shop/persistentvolumeclaims',
    ]);
    expect(error).toBeInstanceOf(ClusterRequestError);
    expect(error).toMatchObject({ statusCode: 409, reason: 'AlreadyExists' });
  });
});
