import { CustomObjectsApi, KubeConfig, Watch } from '@kubernetes/client-node';
import { KubeObject } from '../src';
import { eventually, pvc, SimHarness, startHarness } from './helpers';

jest.setTimeout(30000);

const GROUP = 'snapshot.storage.k8s.io';
const SNAPSHOTS = 'snapshot.storage.k8s.io/volumesnapshots';

/** The way a Backstage backend takes and checks a snapshot: @kubernetes/client-node 1.4.0's CustomObjectsApi. */
describe('VolumeSnapshots through @kubernetes/client-node', () => {
  let h: SimHarness;
  let kc: KubeConfig;
  let custom: CustomObjectsApi;

  beforeAll(async () => {
    h = await startHarness({
      timeFactor: 0.01,
      scenario: [
        {
          apiVersion: 'storage.k8s.io/v1',
          kind: 'StorageClass',
          metadata: {
            name: 'standard',
            annotations: {
              'storageclass.kubernetes.io/is-default-class': 'true',
            },
          },
          provisioner: 'sim.csi.k8s.io',
        },
        {
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
        },
      ] as unknown as KubeObject[],
    });
    kc = new KubeConfig();
    kc.loadFromString(h.sim.kubeconfig);
    custom = kc.makeApiClient(CustomObjectsApi);
    h.sim.store.create('persistentvolumeclaims', pvc('data-db-2'));
    await eventually(
      () =>
        h.sim.store.get('persistentvolumeclaims', 'default', 'data-db-2')
          ?.status?.phase === 'Bound',
      { message: 'claim bound' },
    );
  });
  afterAll(async () => {
    await h?.close();
  });

  const body = (name: string) => ({
    apiVersion: 'snapshot.storage.k8s.io/v1',
    kind: 'VolumeSnapshot',
    metadata: { name, labels: { 'pvc-pruner.backstage.io/job': 'job-1' } },
    spec: { source: { persistentVolumeClaimName: 'data-db-2' } },
  });

  it('creates with dryRun=All without storing anything', async () => {
    const answer: any = await custom.createNamespacedCustomObject({
      group: GROUP,
      version: 'v1',
      namespace: 'default',
      plural: 'volumesnapshots',
      body: body('dry'),
      dryRun: 'All',
    });
    expect(answer.metadata).toMatchObject({
      name: 'dry',
      namespace: 'default',
    });
    expect(h.sim.store.list(SNAPSHOTS).items).toEqual([]);
  });

  it('creates one, sees it become ready through a watch, lists it by label, and deletes it', async () => {
    const created: any = await custom.createNamespacedCustomObject({
      group: GROUP,
      version: 'v1',
      namespace: 'default',
      plural: 'volumesnapshots',
      body: body('snap'),
    });
    const seen: any[] = [];
    const watch = await new Watch(kc).watch(
      '/apis/snapshot.storage.k8s.io/v1/namespaces/default/volumesnapshots',
      {
        fieldSelector: 'metadata.name=snap',
        resourceVersion: created.metadata.resourceVersion,
      },
      (_type, obj: any) => seen.push(obj),
      () => undefined,
    );
    const ready = await eventually(
      () => seen.find(obj => obj.status?.readyToUse),
      { message: 'a watch event with readyToUse' },
    );
    watch.abort();
    expect(ready.status).toMatchObject({
      readyToUse: true,
      restoreSize: '1Gi',
      boundVolumeSnapshotContentName: `snapcontent-${created.metadata.uid}`,
    });
    const content: any = await custom.getClusterCustomObject({
      group: GROUP,
      version: 'v1',
      plural: 'volumesnapshotcontents',
      name: ready.status.boundVolumeSnapshotContentName,
    });
    expect(content.spec.volumeSnapshotRef).toMatchObject({
      namespace: 'default',
      name: 'snap',
      uid: created.metadata.uid,
    });

    const listed: any = await custom.listNamespacedCustomObject({
      group: GROUP,
      version: 'v1',
      namespace: 'default',
      plural: 'volumesnapshots',
      labelSelector: 'pvc-pruner.backstage.io/job=job-1',
    });
    expect(listed.items.map((s: any) => s.metadata.name)).toEqual(['snap']);

    await custom.deleteNamespacedCustomObject({
      group: GROUP,
      version: 'v1',
      namespace: 'default',
      plural: 'volumesnapshots',
      name: 'snap',
    });
    await eventually(() => h.sim.store.list(SNAPSHOTS).items.length === 0, {
      message: 'snapshot gone',
    });
  });
});
