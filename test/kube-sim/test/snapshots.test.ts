import {
  eventually,
  expectNoDiscoveryWarnings,
  SimHarness,
  startHarness,
} from './helpers';

jest.setTimeout(60000);

const SNAPSHOTS = 'snapshot.storage.k8s.io/volumesnapshots';
const CONTENTS = 'snapshot.storage.k8s.io/volumesnapshotcontents';

/**
 * kubectl 1.32 against the demo scenario's cluster: its VolumeSnapshotClass,
 * a snapshot of an orphaned claim taken, listed, described, refused when a
 * field is wrong, restored into a new claim, and deleted with its content.
 */
describe('VolumeSnapshots through kubectl on the demo cluster', () => {
  let h: SimHarness;

  beforeAll(async () => {
    h = await startHarness({ scenario: 'demo', timeFactor: 0.01 });
  });
  afterAll(async () => {
    await h?.close();
  });

  async function ok(args: string[], input?: string): Promise<string> {
    const result = await h.kubectl(args, input ? { input } : {});
    expect({ args, code: result.code, stderr: result.stderr }).toEqual({
      args,
      code: 0,
      stderr: '',
    });
    return result.stdout;
  }
  const table = (out: string) =>
    out
      .trim()
      .split('\n')
      .map(l => l.trim().split(/\s{2,}/));

  const SNAPSHOT_YAML = (
    name: string,
    extra = '',
  ) => `apiVersion: snapshot.storage.k8s.io/v1
kind: VolumeSnapshot
metadata:
  name: ${name}
  namespace: shop
spec:
${extra}  source:
    persistentVolumeClaimName: data-orders-db-3
`;

  it('lists the CRDs as a cluster with the CSI snapshotter does, and keeps them', async () => {
    expect(table(await ok(['get', 'crd']))).toEqual([
      ['NAME', 'CREATED AT'],
      ...[
        'volumesnapshotclasses',
        'volumesnapshotcontents',
        'volumesnapshots',
      ].map(plural => [
        `${plural}.snapshot.storage.k8s.io`,
        expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
      ]),
    ]);
    const crd = JSON.parse(
      await ok([
        'get',
        'crd',
        'volumesnapshots.snapshot.storage.k8s.io',
        '-o',
        'json',
      ]),
    );
    expect(crd.spec).toMatchObject({
      group: 'snapshot.storage.k8s.io',
      scope: 'Namespaced',
      names: {
        kind: 'VolumeSnapshot',
        plural: 'volumesnapshots',
        shortNames: ['vs'],
      },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          subresources: { status: {} },
          schema: {
            openAPIV3Schema: expect.objectContaining({ required: ['spec'] }),
          },
        },
      ],
    });
    const deleted = await h.kubectl([
      'delete',
      'crd',
      'volumesnapshots.snapshot.storage.k8s.io',
    ]);
    expect(deleted.code).toBe(1);
    expect(deleted.stderr).toContain(
      'kube-sim serves customresourcedefinitions.apiextensions.k8s.io read-only',
    );
  });

  it('lists the demo class as its driver default', async () => {
    expect(table(await ok(['get', 'volumesnapshotclass']))).toEqual([
      ['NAME', 'DRIVER', 'DELETIONPOLICY', 'AGE'],
      [
        'sim-snapshots',
        'sim.csi.k8s.io',
        'Delete',
        expect.stringMatching(/^\d+s$/),
      ],
    ]);
    const cls = JSON.parse(
      await ok(['get', 'vsclass', 'sim-snapshots', '-o', 'json']),
    );
    expect(
      cls.metadata.annotations[
        'snapshot.storage.kubernetes.io/is-default-class'
      ],
    ).toBe('true');
  });

  it('refuses a bad field (strict validation) and a broken source (the CRD rules), and stores nothing', async () => {
    await eventually(
      () =>
        h.sim.store.get('persistentvolumeclaims', 'shop', 'data-orders-db-3')
          ?.status?.phase === 'Bound',
      { message: 'orphan bound' },
    );
    const typo = await h.kubectl(['apply', '-f', '-'], {
      input: SNAPSHOT_YAML('typo', '  volumeSnapshotClass: sim-snapshots\n'),
    });
    expect(typo.code).toBe(1);
    expectNoDiscoveryWarnings(typo.stderr);
    expect(typo.stderr.trim()).toBe(
      'Error from server (BadRequest): error when creating "STDIN": VolumeSnapshot in version "v1" cannot be handled as a VolumeSnapshot: strict decoding error: unknown field "spec.volumeSnapshotClass"',
    );
    const both = await h.kubectl(['apply', '-f', '-'], {
      input: SNAPSHOT_YAML('both').replace(
        'persistentVolumeClaimName: data-orders-db-3',
        'persistentVolumeClaimName: data-orders-db-3\n    volumeSnapshotContentName: some-content',
      ),
    });
    expect(both.code).toBe(1);
    expect(both.stderr).toContain(
      'The VolumeSnapshot "both" is invalid: spec.source: Invalid value: "object": exactly one of volumeSnapshotContentName and persistentVolumeClaimName must be set',
    );
    const wrongType = await h.kubectl(['apply', '-f', '-'], {
      input: SNAPSHOT_YAML('typed', '  volumeSnapshotClassName: 7\n'),
    });
    expect(wrongType.code).toBe(1);
    expect(wrongType.stderr).toContain(
      'spec.volumeSnapshotClassName: Invalid value: "integer": spec.volumeSnapshotClassName in body must be of type string: "integer"',
    );
    const dryRun = await ok(
      ['apply', '--dry-run=server', '-f', '-'],
      SNAPSHOT_YAML('dry'),
    );
    expect(dryRun.trim()).toBe(
      'volumesnapshot.snapshot.storage.k8s.io/dry created (server dry run)',
    );
    expect(h.sim.store.list(SNAPSHOTS).items).toEqual([]);
    expect(h.sim.store.list(CONTENTS).items).toEqual([]);
  });

  it('takes a snapshot with the default class and prints the CRD columns', async () => {
    expect(
      (await ok(['apply', '-f', '-'], SNAPSHOT_YAML('orders-3'))).trim(),
    ).toBe('volumesnapshot.snapshot.storage.k8s.io/orders-3 created');
    const ready = await eventually(
      () => {
        const s = h.sim.store.get(SNAPSHOTS, 'shop', 'orders-3');
        return s?.status?.readyToUse ? s : undefined;
      },
      { message: 'snapshot ready' },
    );
    const content = `snapcontent-${ready!.metadata.uid}`;
    expect(table(await ok(['get', 'volumesnapshot', '-n', 'shop']))).toEqual([
      [
        'NAME',
        'READYTOUSE',
        'SOURCEPVC',
        'SOURCESNAPSHOTCONTENT',
        'RESTORESIZE',
        'SNAPSHOTCLASS',
        'SNAPSHOTCONTENT',
        'CREATIONTIME',
        'AGE',
      ],
      [
        'orders-3',
        'true',
        'data-orders-db-3',
        '20Gi',
        'sim-snapshots',
        content,
        expect.stringMatching(/^\d+s$/),
        expect.stringMatching(/^\d+s$/),
      ],
    ]);
    expect(table(await ok(['get', 'vsc']))).toEqual([
      [
        'NAME',
        'READYTOUSE',
        'RESTORESIZE',
        'DELETIONPOLICY',
        'DRIVER',
        'VOLUMESNAPSHOTCLASS',
        'VOLUMESNAPSHOT',
        'VOLUMESNAPSHOTNAMESPACE',
        'AGE',
      ],
      [
        content,
        'true',
        String(20 * 2 ** 30),
        'Delete',
        'sim.csi.k8s.io',
        'sim-snapshots',
        'orders-3',
        'shop',
        expect.stringMatching(/^\d+s$/),
      ],
    ]);
  });

  it('warns about an unknown field with --validate=warn and drops it silently with --validate=false', async () => {
    const warned = await h.kubectl(['apply', '--validate=warn', '-f', '-'], {
      input: SNAPSHOT_YAML('warned', '  volumeSnapshotClass: sim-snapshots\n'),
    });
    expect(warned).toMatchObject({
      code: 0,
      stderr: 'Warning: unknown field "spec.volumeSnapshotClass"\n',
    });
    const quiet = await h.kubectl(['apply', '--validate=false', '-f', '-'], {
      input: SNAPSHOT_YAML('quiet', '  volumeSnapshotClass: sim-snapshots\n'),
    });
    expect(quiet).toMatchObject({ code: 0, stderr: '' });
    for (const name of ['warned', 'quiet']) {
      const stored = h.sim.store.get(SNAPSHOTS, 'shop', name)!;
      expect(stored.spec).toEqual({
        source: { persistentVolumeClaimName: 'data-orders-db-3' },
        ...(stored.spec.volumeSnapshotClassName
          ? { volumeSnapshotClassName: 'sim-snapshots' }
          : {}),
      });
    }
  });

  it('refuses to change the source of a snapshot', async () => {
    const patch = await h.kubectl([
      'patch',
      'volumesnapshot',
      'warned',
      '-n',
      'shop',
      '--type=merge',
      '-p',
      '{"spec":{"source":{"persistentVolumeClaimName":"data-orders-db-4"}}}',
    ]);
    expect(patch.code).toBe(1);
    expect(patch.stderr.trim()).toBe(
      'The VolumeSnapshot "warned" is invalid: spec.source.persistentVolumeClaimName: Invalid value: "string": persistentVolumeClaimName is immutable',
    );
    for (const name of ['warned', 'quiet'])
      await ok(['delete', 'vs', name, '-n', 'shop']);
  });

  it('describes it, with the snapshot controller events', async () => {
    const out = await ok([
      'describe',
      'volumesnapshot',
      'orders-3',
      '-n',
      'shop',
    ]);
    expect(out).toMatch(/^Kind:\s+VolumeSnapshot$/m);
    expect(out).toMatch(
      /^\s+Persistent Volume Claim Name:\s+data-orders-db-3$/m,
    );
    expect(out).toMatch(/^\s+Ready To Use:\s+true$/m);
    expect(out).toMatch(/^\s+Restore Size:\s+20Gi$/m);
    const events = out
      .slice(out.indexOf('Events:'))
      .split('\n')
      .slice(3)
      .filter(l => l.trim())
      .map(l => l.trim().split(/\s{2,}/));
    expect(
      events.map(([type, reason, , from]) => [type, reason, from]),
    ).toEqual([
      ['Normal', 'CreatingSnapshot', 'snapshot-controller'],
      ['Normal', 'SnapshotCreated', 'snapshot-controller'],
      ['Normal', 'SnapshotReady', 'snapshot-controller'],
    ]);
  });

  it('restores it into a claim whose volume names the snapshot, then deletes it with its content', async () => {
    const restore = `apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data-orders-db-3-restored
  namespace: shop
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: standard
  dataSource:
    apiGroup: snapshot.storage.k8s.io
    kind: VolumeSnapshot
    name: orders-3
  resources:
    requests:
      storage: 20Gi
`;
    await ok(['apply', '-f', '-'], restore);
    const claim = await eventually(
      () => {
        const c = h.sim.store.get(
          'persistentvolumeclaims',
          'shop',
          'data-orders-db-3-restored',
        );
        return c?.status?.phase === 'Bound' ? c : undefined;
      },
      { message: 'restored claim bound' },
    );
    const source = h.sim.store.get(
      'persistentvolumeclaims',
      'shop',
      'data-orders-db-3',
    )!;
    const pv = JSON.parse(
      await ok(['get', 'pv', claim!.spec.volumeName, '-o', 'json']),
    );
    expect(pv.metadata.annotations).toMatchObject({
      'kube-sim.io/restored-from-snapshot': 'shop/orders-3',
      'kube-sim.io/restored-from-volume': source.spec.volumeName,
      'kube-sim.io/restored-from-claim-uid': source.metadata.uid,
    });

    const content = h.sim.store.get(SNAPSHOTS, 'shop', 'orders-3')!.status
      .boundVolumeSnapshotContentName;
    expect(
      (await ok(['delete', 'volumesnapshot', 'orders-3', '-n', 'shop'])).trim(),
    ).toBe('volumesnapshot.snapshot.storage.k8s.io "orders-3" deleted');
    await eventually(() => !h.sim.store.get(CONTENTS, undefined, content), {
      message: 'content deleted (deletionPolicy Delete)',
    });
    expect(
      h.sim.store.get('persistentvolumeclaims', 'shop', 'data-orders-db-3')!
        .metadata.finalizers,
    ).toEqual(['kubernetes.io/pvc-protection']);
  });
});
