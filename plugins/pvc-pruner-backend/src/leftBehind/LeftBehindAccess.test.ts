import { mockCredentials, mockServices } from '@backstage/backend-test-utils';
import { Entity, stringifyEntityRef } from '@backstage/catalog-model';
import { InputError, NotAllowedError } from '@backstage/errors';
import { catalogServiceMock } from '@backstage/plugin-catalog-node/testUtils';
import { AuthorizeResult } from '@backstage/plugin-permission-common';
import type { PruneRequest } from 'backstage-plugin-pvc-pruner-common';
import type { KubeGateway } from '../kubernetes';
import { componentEntity } from '../__testUtils__/catalogEntities';
import {
  NamespaceOwners,
  OwnershipChecks,
  WorkloadCatalog,
  workloadEntityOf,
} from '../ownership';
import type { FoundGroup } from './leftBehindGroups';
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

function group(overrides: Partial<FoundGroup> = {}): FoundGroup {
  return {
    namespace: 'payments',
    statefulSet: { name: 'ledger-db', uid: 'deleted-uid' },
    evidence: 'lineage',
    lastSeenAt: '2026-12-03T10:00:00.000Z',
    claimants: [ref(ledger)],
    crowded: false,
    report: {
      name: 'ledger-db',
      namespace: 'payments',
      uid: 'deleted-uid',
      replicas: 0,
      ordinals: { start: 0, end: 0 },
      readyReplicas: 0,
      retentionPolicy: { whenScaled: 'Retain', whenDeleted: 'Retain' },
      templates: ['data'],
      orphans: [
        {
          name: 'data-ledger-db-0',
          uid: 'claim-0',
          resourceVersion: '1',
          ordinal: 0,
          template: 'data',
          requestedBytes: 1,
          reattachesAtReplicas: 1,
        },
      ],
      inUse: [],
      kept: [],
      reclaimableBytes: 1,
      retainedBytes: 0,
    },
    ...overrides,
  };
}

/** The guest may act on `mine` only, and holds the basic permissions named in `basic`. */
function permissionsOn(mine: Entity[], basic: string[] = []) {
  const refs = new Set(mine.map(ref));
  const permissions = mockServices.permissions.mock();
  permissions.authorize.mockImplementation(async requests =>
    requests.map(r => ({
      result: (
        'resourceRef' in r && r.resourceRef
          ? refs.has(r.resourceRef)
          : basic.includes(r.permission.name)
      )
        ? AuthorizeResult.ALLOW
        : AuthorizeResult.DENY,
    })),
  );
  return permissions;
}

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
    expect(authorized.alsoClaimedBy).toEqual([ref(ledger)]);
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
});
