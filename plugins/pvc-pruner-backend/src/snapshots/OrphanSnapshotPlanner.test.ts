import type { V1StorageClass } from '@kubernetes/client-node';
import type {
  OrphanedPvc,
  StatefulSetOrphans,
} from 'backstage-plugin-pvc-pruner-common';
import { ClusterRequestError, VolumeSnapshotClass } from '../kubernetes';
import {
  MAX_STORAGE_CLASS_READS,
  OrphanSnapshotPlanner,
} from './OrphanSnapshotPlanner';
import { DEFAULT_CLASS_ANNOTATION } from './SnapshotClassResolver';

const DRIVER = 'ebs.csi.aws.com';

const defaultClass = (name: string, driver = DRIVER): VolumeSnapshotClass => ({
  metadata: { name, annotations: { [DEFAULT_CLASS_ANNOTATION]: 'true' } },
  driver,
  deletionPolicy: 'Delete',
});

function orphan(
  ordinal: number,
  volume?: Partial<NonNullable<OrphanedPvc['volume']>>,
  storageClassName = 'gp3',
): OrphanedPvc {
  return {
    name: `data-db-${ordinal}`,
    uid: `u${ordinal}`,
    resourceVersion: '1',
    ordinal,
    template: 'data',
    requestedBytes: 1,
    reattachesAtReplicas: ordinal + 1,
    storageClassName,
    ...(volume
      ? {
          volume: {
            name: `pv-${ordinal}`,
            reclaimPolicy: 'Delete',
            retained: false,
            csiDriver: DRIVER,
            ...volume,
          },
        }
      : {}),
  };
}

const manyOrphans = (n: number) =>
  Array.from({ length: n }, (_, i) => orphan(i, {}));

const statefulSet = (name: string, orphans: OrphanedPvc[]) =>
  ({ name, namespace: 'shop', orphans } as StatefulSetOrphans);

function reads(
  classes: () => Promise<VolumeSnapshotClass[]>,
  storageClasses: V1StorageClass[] = [],
) {
  return {
    listVolumeSnapshotClasses: jest.fn(classes),
    readStorageClass: jest.fn(async (name: string) =>
      storageClasses.find(sc => sc.metadata?.name === name),
    ),
  };
}

const enabled = (required = true, mapped: Record<string, string> = {}) =>
  new OrphanSnapshotPlanner({
    enabled: true,
    retentionDays: 7,
    required,
    classByStorageClass: new Map(Object.entries(mapped)),
  });

const plans = (sets: StatefulSetOrphans[]) =>
  sets.flatMap(s => s.orphans.map(o => [o.name, o.snapshotPlan]));

describe('OrphanSnapshotPlanner', () => {
  it('with snapshots off, says so and leaves every report as it is, reading nothing', async () => {
    const planner = new OrphanSnapshotPlanner({
      enabled: false,
      retentionDays: 7,
      required: true,
      classByStorageClass: new Map(),
    });
    const cluster = reads(async () => [defaultClass('ebs')]);
    const sets = [statefulSet('db', [orphan(1, {})])];

    expect(planner.settings).toEqual({ enabled: false });
    await expect(planner.plan(cluster, sets)).resolves.toBe(sets);
    expect(cluster.listVolumeSnapshotClasses).not.toHaveBeenCalled();
  });

  it('names the class of each claim, and why Retain and unbound claims need none, listing the classes once for all', async () => {
    const planner = enabled();
    const cluster = reads(async () => [defaultClass('ebs')]);
    const planned = await planner.plan(cluster, [
      statefulSet('db', [
        orphan(1, {}),
        orphan(2, { reclaimPolicy: 'Retain', retained: true }),
        orphan(3),
      ]),
      statefulSet('web', [orphan(4, {}), orphan(5, {})]),
    ]);

    expect(planner.settings).toEqual({
      enabled: true,
      retentionDays: 7,
      required: true,
    });
    expect(plans(planned)).toEqual([
      ['data-db-1', { kind: 'class', volumeSnapshotClass: 'ebs' }],
      [
        'data-db-2',
        {
          kind: 'not-needed',
          reason: expect.stringContaining(
            'its volume pv-2 is kept when the claim is deleted (reclaim policy Retain)',
          ),
        },
      ],
      [
        'data-db-3',
        {
          kind: 'not-needed',
          reason:
            'it is not bound to a volume, so it holds no data to snapshot',
        },
      ],
      ['data-db-4', { kind: 'class', volumeSnapshotClass: 'ebs' }],
      ['data-db-5', { kind: 'class', volumeSnapshotClass: 'ebs' }],
    ]);
    expect(cluster.listVolumeSnapshotClasses).toHaveBeenCalledTimes(1);
    expect(cluster.readStorageClass).not.toHaveBeenCalled();
  });

  it("gives a claim whose driver has no default class the resolver's reason, and one of a volume without CSI driver its StorageClass's provisioner", async () => {
    const planner = enabled();
    const cluster = reads(
      async () => [defaultClass('pd', 'pd.csi.storage.gke.io')],
      [
        {
          metadata: { name: 'standard' },
          provisioner: 'pd.csi.storage.gke.io',
        },
      ],
    );
    const planned = await planner.plan(cluster, [
      statefulSet('db', [
        orphan(1, {}),
        orphan(2, { csiDriver: undefined }, 'standard'),
      ]),
    ]);

    expect(plans(planned)).toEqual([
      [
        'data-db-1',
        {
          kind: 'none',
          reason: expect.stringContaining(
            `no VolumeSnapshotClass is marked default for CSI driver ${DRIVER}`,
          ),
        },
      ],
      ['data-db-2', { kind: 'class', volumeSnapshotClass: 'pd' }],
    ]);
  });

  it('gives every claim the reason when the cluster does not serve VolumeSnapshotClasses, asking once', async () => {
    const planner = enabled();
    const cluster = reads(async () => {
      throw new ClusterRequestError('demo', 'not found', 404, 'NotFound');
    });
    const planned = await planner.plan(cluster, [
      // More claims than are resolved at once: later ones come after the failure.
      statefulSet('db', manyOrphans(40)),
    ]);

    for (const [, plan] of plans(planned))
      expect(plan).toEqual({
        kind: 'none',
        reason: expect.stringContaining(
          'the cluster does not serve VolumeSnapshotClasses',
        ),
      });
    expect(cluster.listVolumeSnapshotClasses).toHaveBeenCalledTimes(1);
  });

  it('fails soft when the classes cannot be listed: each claim says it would be kept and why, with one request for all', async () => {
    const planner = enabled();
    const cluster = reads(async () => {
      throw new ClusterRequestError(
        'demo',
        'list volumesnapshotclasses: forbidden',
        403,
        'Forbidden',
      );
    });
    const planned = await planner.plan(cluster, [
      // More claims than are resolved at once: later ones come after the failure.
      statefulSet('db', manyOrphans(40)),
    ]);

    for (const [, plan] of plans(planned))
      expect(plan).toEqual({
        kind: 'error',
        reason: expect.stringContaining(
          'its VolumeSnapshotClass could not be told',
        ),
      });
    expect(cluster.listVolumeSnapshotClasses).toHaveBeenCalledTimes(1);
  });

  it('does not hold up the scan for a snapshot API that does not answer: each claim says so', async () => {
    const planner = new OrphanSnapshotPlanner(
      {
        enabled: true,
        retentionDays: 7,
        required: true,
        classByStorageClass: new Map(),
      },
      50,
    );
    const cluster = reads(() => new Promise(() => {}));
    const planned = await planner.plan(cluster, [
      statefulSet('db', manyOrphans(3)),
    ]);

    for (const [, plan] of plans(planned))
      expect(plan).toEqual({
        kind: 'error',
        reason: expect.stringContaining(
          'the cluster did not list VolumeSnapshotClasses within 0.05 s',
        ),
      });
    expect(cluster.listVolumeSnapshotClasses).toHaveBeenCalledTimes(1);
  });

  it('reads at most a few StorageClasses for one answer, however many the claims name', async () => {
    const planner = enabled();
    const cluster = reads(async () => [defaultClass('ebs')]);
    const many = Array.from({ length: MAX_STORAGE_CLASS_READS + 4 }, (_, i) =>
      orphan(i, { csiDriver: undefined }, `class-${i}`),
    );
    const planned = await planner.plan(cluster, [statefulSet('db', many)]);

    expect(cluster.readStorageClass).toHaveBeenCalledTimes(
      MAX_STORAGE_CLASS_READS,
    );
    expect(plans(planned).at(-1)?.[1]).toEqual({
      kind: 'error',
      reason: expect.stringContaining(
        `more than ${MAX_STORAGE_CLASS_READS} StorageClasses`,
      ),
    });
  });

  it("cuts a reason that a cluster's many class names would make long", async () => {
    const planner = enabled();
    const names = Array.from(
      { length: 40 },
      (_, i) => `${'x'.repeat(60)}-${i}`,
    );
    const cluster = reads(async () => names.map(n => defaultClass(n)));
    const planned = await planner.plan(cluster, [
      statefulSet('db', [orphan(1, {})]),
    ]);
    const plan = planned[0].orphans[0].snapshotPlan!;

    expect(plan.kind).toBe('error');
    expect(plan.reason!.length).toBeLessThanOrEqual(600);
    expect(plan.reason).toMatch(/^40 VolumeSnapshotClasses are marked default/);
  });

  it('hands back the same report while its plans stay the same, and a new one when a class changes', async () => {
    const planner = enabled();
    let classes = [defaultClass('ebs')];
    const cluster = reads(async () => classes);
    const sets = [statefulSet('db', [orphan(1, {})])];

    const first = await planner.plan(cluster, sets);
    const again = await planner.plan(cluster, sets);
    classes = [defaultClass('ebs-v2')];
    const changed = await planner.plan(cluster, sets);

    expect(again[0]).toBe(first[0]);
    expect(changed[0]).not.toBe(first[0]);
    expect(changed[0].orphans[0].snapshotPlan).toEqual({
      kind: 'class',
      volumeSnapshotClass: 'ebs-v2',
    });
  });
});
