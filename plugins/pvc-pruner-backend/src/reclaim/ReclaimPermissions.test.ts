import { mockCredentials, mockServices } from '@backstage/backend-test-utils';
import { AuthorizeResult } from '@backstage/plugin-permission-common';
import { ReclaimPermissions } from './ReclaimPermissions';

const ORDERS = 'component:default/orders';
const TWIN = 'component:default/orders-twin';
const credentials = mockCredentials.user('user:default/alice');

/** A permission framework granting exactly `granted`: "<permission> <entity ref>" or a basic permission's name. */
function permissionsGranting(granted: string[]) {
  const permissions = mockServices.permissions.mock();
  permissions.authorize.mockImplementation(
    async requests =>
      requests.map(r => ({
        result: granted.includes(
          'resourceRef' in r && r.resourceRef
            ? `${r.permission.name} ${r.resourceRef}`
            : r.permission.name,
        )
          ? AuthorizeResult.ALLOW
          : AuthorizeResult.DENY,
      })) as any,
  );
  return new ReclaimPermissions(permissions);
}

const traced = (
  claimants: string[],
  crowded = false,
  unverified: string[] = [],
) => ({
  statefulSet: { name: 'orders-db', uid: 'sts-1' },
  claimants,
  unverified,
  crowded,
});

describe('ReclaimPermissions', () => {
  it('needs pvc-pruner.volumes.reclaim on every entity the volume is traced to', async () => {
    const checks = permissionsGranting([
      `pvc-pruner.orphans.read ${ORDERS}`,
      `pvc-pruner.orphans.read ${TWIN}`,
      `pvc-pruner.volumes.reclaim ${ORDERS}`,
    ]);
    const [one, both] = await checks.judge(credentials, [
      traced([ORDERS]),
      traced([ORDERS, TWIN]),
    ]);
    expect(one).toEqual({ readable: true, reclaimable: true });
    expect(both.readable).toBe(true);
    expect(both.reclaimable).toBe(false);
    expect(both.refusal).toContain(`you lack it on ${TWIN}`);
    await expect(
      checks.authorize(credentials, [
        { name: 'pvc-2', attribution: traced([ORDERS, TWIN]) },
      ]),
    ).rejects.toThrow(
      /You may not reclaim volume pvc-2: .*pvc-pruner.volumes.reclaim/,
    );
  });

  it('shows a traced volume only to who may read every claimant', async () => {
    const [verdict] = await permissionsGranting([
      `pvc-pruner.orphans.read ${ORDERS}`,
      'pvc-pruner.fleet.unowned.read',
    ]).judge(credentials, [traced([ORDERS, TWIN])]);
    expect(verdict.readable).toBe(false);
  });

  it('takes a volume no entity can be traced to for the platform: unowned read and prune', async () => {
    const untraced = { claimants: [], unverified: [], crowded: false };
    const [reader] = await permissionsGranting([
      'pvc-pruner.fleet.unowned.read',
    ]).judge(credentials, [untraced]);
    expect(reader).toMatchObject({ readable: true, reclaimable: false });
    expect(reader.refusal).toContain('pvc-pruner.unowned.prune');
    const [platform] = await permissionsGranting([
      'pvc-pruner.fleet.unowned.read',
      'pvc-pruner.unowned.prune',
    ]).judge(credentials, [untraced]);
    expect(platform).toEqual({ readable: true, reclaimable: true });
    const [nobody] = await permissionsGranting([]).judge(credentials, [
      untraced,
    ]);
    expect(nobody.readable).toBe(false);
  });

  it('lets only the platform reclaim a volume whose StatefulSet had more claimants than were kept, and says so', async () => {
    const [owner] = await permissionsGranting([
      `pvc-pruner.orphans.read ${ORDERS}`,
      `pvc-pruner.volumes.reclaim ${ORDERS}`,
      'pvc-pruner.fleet.unowned.read',
    ]).judge(credentials, [traced([ORDERS], true)]);
    expect(owner.reclaimable).toBe(false);
    expect(owner.refusal).toContain(
      'only a platform team with pvc-pruner.unowned.prune may reclaim it',
    );
    const [platform] = await permissionsGranting([
      'pvc-pruner.unowned.prune',
      'pvc-pruner.fleet.unowned.read',
    ]).judge(credentials, [traced([ORDERS], true)]);
    expect(platform).toMatchObject({ readable: true, reclaimable: true });
    expect(platform.note).toContain('more than 20 catalog entities');
  });
});

describe('ReclaimPermissions, a recorded claimant whose entity is gone or was re-created', () => {
  const reRegistered = traced([ORDERS], false, [ORDERS]);

  it('gives no right through its ref: reclaiming needs pvc-pruner.unowned.prune, and the refusal says why', async () => {
    const [owner] = await permissionsGranting([
      `pvc-pruner.orphans.read ${ORDERS}`,
      `pvc-pruner.volumes.reclaim ${ORDERS}`,
    ]).judge(credentials, [reRegistered]);
    expect(owner).toMatchObject({ readable: false, reclaimable: false });
    expect(owner.refusal).toBe(
      'recorded owner component:default/orders no longer exists (or was re-created); a platform team with pvc-pruner.unowned.prune may reclaim it',
    );
    const [platform] = await permissionsGranting([
      'pvc-pruner.fleet.unowned.read',
      'pvc-pruner.unowned.prune',
    ]).judge(credentials, [reRegistered]);
    expect(platform).toMatchObject({ readable: true, reclaimable: true });
    expect(platform.note).toContain('no longer exists (or was re-created)');
  });

  it('still needs the permissions on the verified claimants beside it', async () => {
    const [verdict] = await permissionsGranting([
      'pvc-pruner.fleet.unowned.read',
      'pvc-pruner.unowned.prune',
    ]).judge(credentials, [traced([ORDERS, TWIN], false, [ORDERS])]);
    expect(verdict.reclaimable).toBe(false);
    expect(verdict.refusal).toContain(`you lack it on ${TWIN}`);
  });
});
