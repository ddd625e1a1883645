import { historyNow, KubeSim, manifest, pvc, startKubeSim } from './index';

const CLAIMS = 'persistentvolumeclaims';
const SNAPSHOTS = 'snapshot.storage.k8s.io/volumesnapshots';

async function waitFor<T>(check: () => T | undefined | false, what: string) {
  const deadline = Date.now() + 5000;
  for (;;) {
    const value = check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise(resolve => setTimeout(resolve, 2));
  }
}

describe('ApiHistory and VolumeSnapshots', () => {
  let sim: KubeSim;
  const call = (method: string, path: string) =>
    fetch(`${sim.url}${path}`, {
      method,
      headers: { Authorization: `Bearer ${sim.token}` },
    });
  const deleteClaim = (name: string) =>
    call('DELETE', `/api/v1/namespaces/default/persistentvolumeclaims/${name}`);
  const claim = (name: string) => sim.store.get(CLAIMS, 'default', name);
  const snapshot = (name: string) => sim.store.get(SNAPSHOTS, 'default', name);
  const takeSnapshot = (name: string, claimName: string) =>
    sim.store.create(
      SNAPSHOTS,
      manifest({
        apiVersion: 'snapshot.storage.k8s.io/v1',
        kind: 'VolumeSnapshot',
        metadata: { name, namespace: 'default' },
        spec: { source: { persistentVolumeClaimName: claimName } },
      }),
    );
  const bound = async (name: string) => {
    sim.store.create(CLAIMS, pvc(name));
    return waitFor(
      () => claim(name)?.status?.phase === 'Bound' && claim(name),
      `${name} bound`,
    );
  };

  beforeEach(async () => {
    sim = await startKubeSim({
      recordHistory: true,
      timeFactor: 0.001,
      scenario: [
        manifest({
          apiVersion: 'storage.k8s.io/v1',
          kind: 'StorageClass',
          metadata: {
            name: 'standard',
            annotations: {
              'storageclass.kubernetes.io/is-default-class': 'true',
            },
          },
          provisioner: 'sim.csi.k8s.io',
        }),
        manifest({
          apiVersion: 'snapshot.storage.k8s.io/v1',
          kind: 'VolumeSnapshotClass',
          metadata: {
            name: 'csi',
            annotations: {
              'snapshot.storage.kubernetes.io/is-default-class': 'true',
            },
          },
          driver: 'sim.csi.k8s.io',
          deletionPolicy: 'Delete',
        }),
      ],
    });
  });
  afterEach(() => sim.close());

  it('tells, for each claim deletion, which snapshots of that claim uid were ready when it arrived', async () => {
    const slow = await bound('slow');
    const quick = await bound('quick');
    sim.addSnapshotBehaviour({ claim: 'slow', readyAfterSeconds: 300 });
    takeSnapshot('slow-snap', 'slow');
    const quickSnap = takeSnapshot('quick-snap', 'quick');
    await waitFor(
      () => snapshot('quick-snap')?.status?.readyToUse,
      'quick ready',
    );
    await waitFor(
      () => snapshot('slow-snap')?.status?.creationTime,
      'slow cut',
    );

    expect((await deleteClaim('slow')).status).toBe(202);
    expect((await deleteClaim('quick')).status).toBe(202);
    const [early, late] = sim.history!.claimDeletions();
    expect(early.claim?.uid).toBe(slow.metadata.uid);
    expect(early.claim?.finalizers).toContain(
      'snapshot.storage.kubernetes.io/pvc-as-source-protection',
    );
    expect(early.readySnapshots).toEqual([]);
    expect(late.claim?.uid).toBe(quick.metadata.uid);
    expect(late.readySnapshots).toEqual([
      {
        namespace: 'default',
        name: 'quick-snap',
        uid: quickSnap.metadata.uid,
        readySince: expect.any(Number),
      },
    ]);
    expect(late.readySnapshots![0].readySince).toBeLessThan(late.request.at);

    // the slow one becomes ready later: too late for that delete, and then the claim goes
    await waitFor(
      () => snapshot('slow-snap')?.status?.readyToUse,
      'slow ready',
    );
    await waitFor(() => !claim('slow'), 'slow claim gone');
    expect(
      sim.history!.readySnapshotsOf(slow.metadata.uid, early.request.at),
    ).toEqual([]);
    expect(
      sim.history!.readySnapshotsOf(slow.metadata.uid, historyNow()),
    ).toMatchObject([{ name: 'slow-snap' }]);
    expect(
      sim
        .history!.snapshotEvents()
        .filter(e => e.name === 'slow-snap')
        .map(e => e.event),
    ).toEqual(['created', 'ready']);
    expect(snapshot('slow-snap')?.status?.readyToUse).toBe(true);
  });

  it('does not count a snapshot of an earlier claim of the same name, nor one being deleted', async () => {
    const first = await bound('data');
    const snap = takeSnapshot('snap', 'data');
    await waitFor(() => snapshot('snap')?.status?.readyToUse, 'ready');
    expect((await deleteClaim('data')).status).toBe(202);
    await waitFor(() => !claim('data'), 'first claim gone');
    const second = await bound('data');
    expect((await deleteClaim('data')).status).toBe(202);
    const [, again] = sim.history!.claimDeletions();
    expect(again.claim?.uid).toBe(second.metadata.uid);
    expect(again.readySnapshots).toEqual([]);
    expect(
      sim.history!.readySnapshotsOf(first.metadata.uid, historyNow()),
    ).toMatchObject([{ uid: snap.metadata.uid }]);

    sim.store.delete(SNAPSHOTS, 'default', 'snap');
    const marked = historyNow();
    await waitFor(() => !snapshot('snap'), 'snapshot gone');
    expect(sim.history!.readySnapshotsOf(first.metadata.uid, marked)).toEqual(
      [],
    );
    expect(
      sim
        .history!.snapshotEvents()
        .filter(e => e.uid === snap.metadata.uid)
        .map(e => e.event),
    ).toEqual(['created', 'ready', 'unready', 'deleting', 'deleted']);
  });

  it('records a snapshot error', async () => {
    await bound('data');
    sim.addSnapshotBehaviour({ error: 'disk on fire' });
    takeSnapshot('snap', 'data');
    await waitFor(() => snapshot('snap')?.status?.error, 'error');
    expect(sim.history!.snapshotEvents().map(e => [e.event, e.error])).toEqual([
      ['created', undefined],
      [
        'error',
        expect.stringMatching(
          /rpc error: code = Internal desc = disk on fire"$/,
        ),
      ],
    ]);
  });
  it('takes driver rules from another process through /_sim/snapshot-behaviours', async () => {
    const admin = (method: string, path: string, body?: unknown) =>
      fetch(`${sim.url}/_sim/snapshot-behaviours${path}`, {
        method,
        headers: {
          Authorization: `Bearer ${sim.token}`,
          'Content-Type': 'application/json',
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    const refused = await admin('POST', '', { readyAfterSeconds: -3 });
    expect(refused.status).toBe(400);
    expect((await refused.json()).message).toBe(
      'readyAfterSeconds must be a non-negative number',
    );
    const added = await admin('POST', '', { claim: 'data', error: 'no space' });
    const { id } = await added.json();
    expect(await (await admin('GET', '')).json()).toEqual({
      rules: [{ id, claim: 'data', error: 'no space' }],
    });
    await bound('data');
    takeSnapshot('snap', 'data');
    await waitFor(() => snapshot('snap')?.status?.error, 'error');
    expect(snapshot('snap')!.status.error.message).toContain('no space');
    expect((await admin('DELETE', `/${id}`)).status).toBe(200);
    expect(sim.snapshotBehaviours()).toEqual([]);
  });
});
