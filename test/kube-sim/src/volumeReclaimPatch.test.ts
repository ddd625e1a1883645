import { KubeSim, pvc, startKubeSim } from './index';

const VOLUMES = '/api/v1/persistentvolumes';

/**
 * What a client reclaiming a Released volume relies on, as kube-apiserver
 * does it: a merge patch carrying `metadata.resourceVersion` is refused with
 * 409 when the volume changed since, and a volume records since when it is
 * Released (`status.lastPhaseTransitionTime`, Kubernetes 1.31).
 */
describe('a merge patch of a Released volume', () => {
  let sim: KubeSim;
  const patch = (name: string, body: unknown, query = '') =>
    fetch(`${sim.url}${VOLUMES}/${name}${query}`, {
      method: 'PATCH',
      headers: {
        Authorization: `Bearer ${sim.token}`,
        'Content-Type': 'application/merge-patch+json',
      },
      body: JSON.stringify(body),
    });

  /** A Retain volume whose claim was deleted, Released by the controllers. */
  async function releasedVolume() {
    sim.store.create('storage.k8s.io/storageclasses', {
      apiVersion: 'storage.k8s.io/v1',
      kind: 'StorageClass',
      metadata: { name: 'keep' },
      provisioner: 'ebs.csi.aws.com',
      reclaimPolicy: 'Retain',
      volumeBindingMode: 'Immediate',
    } as any);
    sim.store.create(
      'persistentvolumeclaims',
      pvc('data', { storageClassName: 'keep' }),
    );
    const name = await until(
      () =>
        sim.store.get('persistentvolumeclaims', 'default', 'data')?.spec
          .volumeName,
    );
    sim.store.delete('persistentvolumeclaims', 'default', 'data');
    await until(
      () =>
        sim.store.get('persistentvolumes', undefined, name)?.status?.phase ===
        'Released',
    );
    return name as string;
  }

  async function until<T>(read: () => T): Promise<NonNullable<T>> {
    for (let i = 0; i < 500; i++) {
      const value = read();
      if (value) return value as NonNullable<T>;
      await new Promise(r => setTimeout(r, 10));
    }
    throw new Error('timed out');
  }

  beforeEach(async () => {
    sim = await startKubeSim({ timeFactor: 0.02 });
  });
  afterEach(() => sim.close());

  it('says since when it is Released', async () => {
    const name = await releasedVolume();
    const since = sim.store.get('persistentvolumes', undefined, name)!.status
      .lastPhaseTransitionTime;
    expect(Date.parse(since)).not.toBeNaN();
    expect(Date.now() - Date.parse(since)).toBeLessThan(60_000);
  });

  it('is refused with 409 when the resourceVersion it carries is not the current one, and changes nothing', async () => {
    const name = await releasedVolume();
    const seen = sim.store.get('persistentvolumes', undefined, name)!;
    const changed = structuredClone(seen);
    changed.metadata.labels = { touched: 'yes' };
    const current = sim.store.update('persistentvolumes', changed);

    const res = await patch(name, {
      metadata: { resourceVersion: seen.metadata.resourceVersion },
      spec: { persistentVolumeReclaimPolicy: 'Delete' },
    });

    expect(res.status).toBe(409);
    expect((await res.json()).reason).toBe('Conflict');
    const after = sim.store.get('persistentvolumes', undefined, name)!;
    expect(after.metadata.resourceVersion).toBe(
      current.metadata.resourceVersion,
    );
    expect(after.spec.persistentVolumeReclaimPolicy).toBe('Retain');
  });

  it('is applied with the current resourceVersion, and the volume is then reclaimed; with dryRun=All nothing changes', async () => {
    const name = await releasedVolume();
    const seen = sim.store.get('persistentvolumes', undefined, name)!;
    const body = {
      metadata: { resourceVersion: seen.metadata.resourceVersion },
      spec: { persistentVolumeReclaimPolicy: 'Delete' },
    };

    expect((await patch(name, body, '?dryRun=All')).status).toBe(200);
    expect(
      sim.store.get('persistentvolumes', undefined, name)!.metadata
        .resourceVersion,
    ).toBe(seen.metadata.resourceVersion);

    expect((await patch(name, body)).status).toBe(200);
    await until(() => !sim.store.get('persistentvolumes', undefined, name));
  });
});
