import { mockCredentials, mockServices } from '@backstage/backend-test-utils';
import { Entity, stringifyEntityRef } from '@backstage/catalog-model';
import { InputError, NotAllowedError } from '@backstage/errors';
import { catalogServiceMock } from '@backstage/plugin-catalog-node/testUtils';
import type { PruneRequest } from 'backstage-plugin-pvc-pruner-common';
import { ClusterRequestError, type KubeGateway } from '../kubernetes';
import { componentEntity } from '../__testUtils__/catalogEntities';
import {
  NamespaceOwners,
  OwnershipChecks,
  WorkloadCatalog,
  workloadEntityOf,
} from '../ownership';
import type { FoundGroup } from './leftBehindGroups';
import { ledgerGroup as group } from '../__testUtils__/ledgerGroup';
import { permissionsOn } from '../__testUtils__/permissionsOn';
import { LeftBehindAccess } from './LeftBehindAccess';

const GUEST = mockCredentials.user('user:default/guest');
const orders = componentEntity('orders', { owner: 'checkout' });
const ledger = componentEntity('ledger', {
  owner: 'payments',
  annotations: { 'backstage.io/kubernetes-id': 'ledger' },
});
/** A catalog author's selector that matches the ledger claims' labels. */
const grabber = componentEntity('grabber', {
  owner: 'checkout',
  annotations: { 'backstage.io/kubernetes-label-selector': 'app=ledger' },
});
const ref = (e: Entity) => stringifyEntityRef(e);

function access(
  mine: Entity[],
  groups: FoundGroup[] = [group()],
  basic: string[] = [],
) {
  const permissions = permissionsOn(mine, basic);
  const workloads = new WorkloadCatalog({
    catalog: catalogServiceMock({ entities: [orders, ledger, grabber] }),
    auth: mockServices.auth(),
    logger: mockServices.logger.mock(),
  });
  const ownership = new OwnershipChecks({
    permissions,
    workloads,
    namespaceOwners: new NamespaceOwners(),
  });
  return new LeftBehindAccess({
    permissions,
    finder: { groupsIn: async () => groups },
    ownership,
    workloads,
  });
}

const gateway = { cluster: 'prod' } as KubeGateway;

function request(overrides: Partial<PruneRequest> = {}): PruneRequest {
  return {
    entityRef: ref(ledger),
    cluster: 'prod',
    namespace: 'payments',
    statefulSet: 'ledger-db',
    pvcs: [{ name: 'data-ledger-db-0', uid: 'claim-0' }],
    leftBy: { evidence: 'lineage', statefulSetUid: 'deleted-uid' },
    ...overrides,
  };
}

describe('LeftBehindAccess.readable', () => {
  it('shows a group to who may read every claimant', async () => {
    const [verdict] = await access([ledger]).readable(GUEST, [group()]);
    expect(verdict).toEqual({ refused: [], crowded: false });
  });

  it('a claimant added by a selector only adds a check: its author still cannot read the recorded claimant’s claims', async () => {
    const grabbed = group({ claimants: [ref(grabber), ref(ledger)] });
    const [verdict] = await access([grabber, orders]).readable(GUEST, [
      grabbed,
    ]);
    expect(verdict.refused).toEqual([ref(ledger)]);
    // And the owner now needs the grabber too: withheld until it is fixed.
    const [owner] = await access([ledger]).readable(GUEST, [grabbed]);
    expect(owner.refused).toEqual([ref(grabber)]);
  });

  it('shows a crowded group to nobody, asking nothing', async () => {
    const [verdict] = await access([ledger]).readable(GUEST, [
      group({ crowded: true }),
    ]);
    expect(verdict).toEqual({ refused: [ref(ledger)], crowded: true });
  });
});

describe('LeftBehindAccess.authorizePrune', () => {
  const target = workloadEntityOf(ledger)!;
  const authorize = (
    mine: Entity[],
    overrides: Partial<PruneRequest> = {},
    groups?: FoundGroup[],
  ) =>
    access(mine, groups).authorizePrune({
      request: request(overrides),
      target,
      credentials: GUEST,
      gateway,
    });

  it('authorizes the owner, and says what the job prunes and who else is authorized', async () => {
    const authorized = await authorize([ledger]);
    expect(authorized.alsoClaimedBy).toEqual([
      { ref: ref(ledger), uid: 'uid-ledger' },
    ]);
    expect(authorized.subject).toBeDefined();
  });

  it('refuses a StatefulSet uid that is not the deleted one (one that exists, say)', async () => {
    await expect(
      authorize([ledger], {
        leftBy: { evidence: 'lineage', statefulSetUid: 'live-uid' },
      }),
    ).rejects.toThrow(InputError);
  });

  it('refuses a claim the group does not hold (not in its lineage), or one under another uid', async () => {
    await expect(
      authorize([ledger], {
        pvcs: [{ name: 'data-orders-db-2', uid: 'x' }],
      }),
    ).rejects.toThrow(/Not claims left by StatefulSet payments\/ledger-db/);
    await expect(
      authorize([ledger], {
        pvcs: [{ name: 'data-ledger-db-0', uid: 'recreated' }],
      }),
    ).rejects.toThrow(InputError);
  });

  it('needs prune on every claimant, recorded ones included, when a selector added another', async () => {
    const grabbed = [group({ claimants: [ref(grabber), ref(ledger)] })];
    await expect(
      access([grabber], grabbed).authorizePrune({
        request: request({ entityRef: ref(grabber) }),
        target: workloadEntityOf(grabber)!,
        credentials: GUEST,
        gateway,
      }),
    ).rejects.toThrow(NotAllowedError);
    await expect(authorize([ledger], {}, grabbed)).rejects.toThrow(
      /also claimed by component:default\/grabber/,
    );
  });

  it('refuses an entity that is no claimant, and a crowded group', async () => {
    await expect(
      access([orders]).authorizePrune({
        request: request({ entityRef: ref(orders) }),
        target: workloadEntityOf(orders)!,
        credentials: GUEST,
        gateway,
      }),
    ).rejects.toThrow(/is not a claimant/);
    await expect(
      authorize([ledger], {}, [group({ crowded: true })]),
    ).rejects.toThrow(NotAllowedError);
  });

  it('prunes claims known only by name and labels only with each name typed', async () => {
    const guessed = [
      group({
        evidence: 'name-and-labels',
        statefulSet: { name: 'ledger-db' },
      }),
    ];
    await expect(
      authorize([ledger], { leftBy: { evidence: 'name-and-labels' } }, guessed),
    ).rejects.toThrow(/typing its name/);
    await expect(
      authorize(
        [ledger],
        {
          leftBy: {
            evidence: 'name-and-labels',
            typedNames: ['data-ledger-db-1'],
          },
        },
        guessed,
      ),
    ).rejects.toThrow(/not typed: data-ledger-db-0/);
    await expect(
      authorize(
        [ledger],
        {
          leftBy: {
            evidence: 'name-and-labels',
            typedNames: ['data-ledger-db-0'],
          },
        },
        guessed,
      ),
    ).resolves.toBeDefined();
    // A lineage request cannot prune a guessed group, nor the other way round.
    await expect(authorize([ledger], {}, guessed)).rejects.toThrow(InputError);
  });

  it('has the job watch, and read before each batch, every StatefulSet name the claims’ names read as', async () => {
    const guessed = [
      group({
        evidence: 'name-and-labels',
        statefulSet: { name: 'ledger-db' },
        nameEvidence: {
          template: 'data',
          labels: {},
          otherParses: [{ template: 'data-ledger', statefulSet: 'db' }],
        },
      }),
    ];
    const { subject } = await authorize(
      [ledger],
      {
        leftBy: {
          evidence: 'name-and-labels',
          typedNames: ['data-ledger-db-0'],
        },
      },
      guessed,
    );
    const watched: string[] = [];
    const read: string[] = [];
    const cluster = {
      cluster: 'prod',
      watchOne: async (_: string, where: { name: string }) => {
        watched.push(where.name);
        return () => {};
      },
      readStatefulSet: async (_: string, name: string) => {
        read.push(name);
        throw new ClusterRequestError('prod', 'not found', 404);
      },
    } as unknown as KubeGateway;
    const guard = await subject!.start(cluster, 'payments', 'ledger-db');
    expect(watched.sort()).toEqual(['db', 'ledger-db']);
    expect(read.sort()).toEqual(['db', 'ledger-db']);
    expect(guard.abortReason).toBeUndefined();
  });

  it('judges the recorded claimants by the uids they were recorded with, whatever the finder’s catalog read said: an entity registered again under the ref is not the claimant', async () => {
    const reRegisteredSinceFound = [
      group({ recordedUids: { [ref(ledger)]: 'uid-ledger-before' } }),
    ];
    await expect(
      authorize([ledger], {}, reRegisteredSinceFound),
    ).rejects.toThrow(/pvc-pruner\.unowned\.prune/);
  });

  describe('a recorded claimant that left the catalog (removed, renamed, or its Kubernetes annotations dropped)', () => {
    /** ledger's claims as recorded when the entity was still called ledger-old; ledger claims them by labels. */
    const renamed = [
      group({ claimants: ['component:default/ledger-old', ref(ledger)] }),
    ];

    it('is hidden from who may read only the claimant still in the catalog', async () => {
      const [verdict] = await access([ledger], renamed).readable(
        GUEST,
        renamed,
      );
      expect(verdict.refused).toEqual(['component:default/ledger-old']);
    });

    it('is not pruned by the remaining claimant alone: the prune needs pvc-pruner.unowned.prune, and the refusal says why', async () => {
      await expect(authorize([ledger], {}, renamed)).rejects.toThrow(
        'StatefulSet payments/ledger-db in cluster "prod" was recorded as claimed by component:default/ledger-old, no longer in the catalog as recorded (removed, renamed, its Kubernetes annotations dropped, or registered again by someone else), so its owners cannot be asked: pruning it needs pvc-pruner.unowned.prune',
      );
    });

    it('is pruned by who holds pvc-pruner.unowned.prune and prune on the remaining claimants, and the gone one stays authorized for the job', async () => {
      const authorized = await access([ledger], renamed, [
        'pvc-pruner.unowned.prune',
      ]).authorizePrune({
        request: request(),
        target,
        credentials: GUEST,
        gateway,
      });
      expect(authorized.alsoClaimedBy).toEqual([
        { ref: 'component:default/ledger-old', uid: '' },
        { ref: ref(ledger), uid: 'uid-ledger' },
      ]);
    });
  });
});

describe('LeftBehindAccess, a recorded claimant whose entity is gone or was re-created', () => {
  // leftBehindIn marks it (unverifiedClaimants); whoever registers the same
  // name again, or holds rights on it, gets nothing through the ref.
  const reRegistered = group({
    unverifiedClaimants: [ref(ledger)],
    ownerNotice:
      'recorded owner component:default/ledger no longer exists (or was re-created); a platform team with pvc-pruner.unowned.prune may prune it',
  });

  it('withholds the group from who holds read on the ref alone, and shows it to the platform', async () => {
    const [holder] = await access([ledger]).readable(GUEST, [reRegistered]);
    expect(holder.refused).toEqual([ref(ledger)]);
    const [platform] = await access(
      [ledger],
      [],
      ['pvc-pruner.fleet.unowned.read'],
    ).readable(GUEST, [reRegistered]);
    expect(platform.refused).toEqual([]);
  });

  it('refuses a prune by who holds prune on the ref alone, saying why; the platform may prune', async () => {
    const prune = (basic: string[]) =>
      access([ledger], [reRegistered], basic).authorizePrune({
        request: request(),
        target: workloadEntityOf(ledger)!,
        credentials: GUEST,
        gateway,
      });
    await expect(prune([])).rejects.toThrow(
      /component:default\/ledger no longer exists \(or was re-created\); a platform team with pvc-pruner.unowned.prune may prune it/,
    );
    await expect(prune(['pvc-pruner.unowned.prune'])).resolves.toBeDefined();
  });
  it('is the platform’s as its volumes are (ReclaimPermissions): seen and pruned from the fleet page with the unowned permissions alone, without rights on whoever holds the ref now', async () => {
    const platform = access(
      [],
      [reRegistered],
      ['pvc-pruner.fleet.unowned.read', 'pvc-pruner.unowned.prune'],
    );
    const [verdict] = await platform.readable(GUEST, [reRegistered]);
    expect(verdict.refused).toEqual([]);
    await expect(
      platform.authorizePrune({
        request: request({ entityRef: undefined }),
        credentials: GUEST,
        gateway,
      }),
    ).resolves.toBeDefined();
  });
});
