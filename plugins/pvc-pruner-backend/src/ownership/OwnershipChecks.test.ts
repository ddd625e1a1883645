import { mockCredentials, mockServices } from '@backstage/backend-test-utils';
import { Entity, stringifyEntityRef } from '@backstage/catalog-model';
import { NotAllowedError } from '@backstage/errors';
import { catalogServiceMock } from '@backstage/plugin-catalog-node/testUtils';
import { AuthorizeResult } from '@backstage/plugin-permission-common';
import type { V1StatefulSet } from '@kubernetes/client-node';
import type { KubeGateway } from '../kubernetes';
import { componentEntity } from '../__testUtils__/catalogEntities';
import { NamespaceOwners } from './NamespaceOwners';
import { OwnershipChecks } from './OwnershipChecks';
import { WorkloadCatalog } from './WorkloadCatalog';
import { workloadEntityOf } from './WorkloadEntity';

/*
 * The demo's story: the guest (team checkout) registers Components that
 * over-claim another team's StatefulSets; only each StatefulSet's owners
 * may read or prune it, whatever a catalog entity claims.
 */

const GUEST = mockCredentials.user('user:default/guest');

const ledger = componentEntity('ledger', {
  owner: 'group:default/payments',
  annotations: { 'backstage.io/kubernetes-id': 'ledger' },
});
const searchIndex = componentEntity('search-index', { owner: 'search' });
const orders = componentEntity('orders', { owner: 'checkout' });
const catchAll = componentEntity('everything', {
  owner: 'checkout',
  annotations: { 'backstage.io/kubernetes-label-selector': '!nonexistent' },
});
const borrowed = componentEntity('my-search', {
  owner: 'checkout',
  annotations: { 'backstage.io/kubernetes-id': 'search-index' },
});

const ref = (e: Entity) => stringifyEntityRef(e);
const target = (e: Entity) => workloadEntityOf(e)!;

function sts(name: string, namespace: string, id?: string): V1StatefulSet {
  return {
    metadata: {
      name,
      namespace,
      labels: id ? { 'backstage.io/kubernetes-id': id } : {},
    },
  };
}
const LEDGER_DB = sts('ledger-db', 'payments', 'ledger');
const SEARCH = sts('search-index', 'search', 'search-index');
const ORDERS_DB = sts('orders-db', 'shop', 'orders');
const STRAY = sts('stray', 'tools');

/** The owners-only policy of the demo: the guest may act on checkout's entities only (and holds the basic permissions in `basic`). */
function ownersOnly(basic: string[] = []) {
  const permissions = mockServices.permissions.mock();
  const mine = new Set([ref(orders), ref(catchAll), ref(borrowed)]);
  permissions.authorize.mockImplementation(async requests =>
    requests.map(r => ({
      result: (
        'resourceRef' in r && r.resourceRef
          ? mine.has(r.resourceRef)
          : basic.includes(r.permission.name)
      )
        ? AuthorizeResult.ALLOW
        : AuthorizeResult.DENY,
    })),
  );
  return permissions;
}

function checks(
  entities: Entity[],
  permissions = ownersOnly(),
  namespaceOwners = new NamespaceOwners(),
) {
  const workloads = new WorkloadCatalog({
    catalog: catalogServiceMock({ entities }),
    auth: mockServices.auth(),
    logger: mockServices.logger.mock(),
  });
  return {
    ownership: new OwnershipChecks({ permissions, workloads, namespaceOwners }),
    permissions,
    workloads,
  };
}

const gateway = {} as KubeGateway;

describe('OwnershipChecks', () => {
  describe('readable', () => {
    it('withholds a StatefulSet another entity claims that the caller may not read, naming that entity; one batch, without the entity asked about', async () => {
      const { ownership, permissions } = checks([
        ledger,
        searchIndex,
        orders,
        catchAll,
      ]);

      const verdicts = await ownership.readable(
        GUEST,
        [
          { cluster: 'demo', statefulSet: LEDGER_DB },
          { cluster: 'demo', statefulSet: SEARCH },
          { cluster: 'demo', statefulSet: ORDERS_DB },
          { cluster: 'demo', statefulSet: STRAY },
        ],
        { readable: new Set([ref(catchAll)]) },
      );

      const vouched = { crowded: false, pruneNeeds: [] };
      expect(verdicts).toEqual([
        {
          claimants: [ref(catchAll), ref(ledger)],
          refused: [ref(ledger)],
          ...vouched,
        },
        {
          claimants: [ref(catchAll), ref(searchIndex)],
          refused: [ref(searchIndex)],
          ...vouched,
        },
        { claimants: [ref(catchAll), ref(orders)], refused: [], ...vouched },
        // Only the catch-all claims it: a prune would need pvc-pruner.unowned.prune.
        {
          claimants: [ref(catchAll)],
          refused: [],
          crowded: false,
          pruneNeeds: ['pvc-pruner.unowned.prune'],
        },
      ]);
      expect(permissions.authorize).toHaveBeenCalledTimes(1);
      expect(
        permissions.authorize.mock.calls[0][0].map(r =>
          'resourceRef' in r ? r.resourceRef : undefined,
        ),
      ).toEqual([ref(ledger), ref(searchIndex), ref(orders)]);
    });
  });

  describe('authorizePrune', () => {
    it('refuses a borrowed id: the StatefulSet’s own entity is a claimant the caller may not prune', async () => {
      const { ownership } = checks([searchIndex, borrowed]);

      const refusal = ownership.authorizePrune({
        credentials: GUEST,
        target: target(borrowed),
        cluster: 'demo',
        statefulSet: SEARCH,
        gateway,
      });

      await expect(refusal).rejects.toThrow(NotAllowedError);
      await expect(refusal).rejects.toThrow(
        'StatefulSet search/search-index in cluster "demo" is also claimed by component:default/search-index: pruning it needs pvc-pruner.prune on every entity that claims it, and you lack it on that one',
      );
    });

    it('returns a recorded claimant no longer in the catalog among those it authorized, but not among those present, who read the job', async () => {
      const { ownership } = checks(
        [orders],
        ownersOnly(['pvc-pruner.unowned.prune']),
      );

      await expect(
        ownership.authorizePrune({
          credentials: GUEST,
          target: target(orders),
          cluster: 'demo',
          statefulSet: ORDERS_DB,
          gateway,
          alsoClaimedBy: [{ ref: 'component:default/retired', uid: 'gone' }],
        }),
      ).resolves.toEqual({
        claimants: [ref(orders), 'component:default/retired'],
        present: [ref(orders)],
      });
    });

    it('refuses a catch-all selector on another team’s StatefulSet', async () => {
      const { ownership } = checks([ledger, catchAll]);
      await expect(
        ownership.authorizePrune({
          credentials: GUEST,
          target: target(catchAll),
          cluster: 'demo',
          statefulSet: LEDGER_DB,
          gateway,
        }),
      ).rejects.toThrow(/is also claimed by component:default\/ledger/);
    });

    it('checks every claimant and pvc-pruner.unowned.prune in one batch, and returns the claimants it authorized', async () => {
      const { ownership, permissions } = checks([orders, catchAll]);

      await expect(
        ownership.authorizePrune({
          credentials: GUEST,
          target: target(orders),
          cluster: 'demo',
          statefulSet: ORDERS_DB,
          gateway,
        }),
      ).resolves.toEqual({
        claimants: [ref(catchAll), ref(orders)],
        present: [ref(catchAll), ref(orders)],
      });
      expect(permissions.authorize).toHaveBeenCalledTimes(1);
      expect(
        permissions.authorize.mock.calls[0][0].map(r => [
          r.permission.name,
          'resourceRef' in r ? r.resourceRef : undefined,
        ]),
      ).toEqual([
        ['pvc-pruner.prune', ref(catchAll)],
        ['pvc-pruner.prune', ref(orders)],
        ['pvc-pruner.unowned.prune', undefined],
      ]);
    });

    it('names the entity asked about when the caller may not prune it', async () => {
      const { ownership } = checks([ledger]);
      await expect(
        ownership.authorizePrune({
          credentials: GUEST,
          target: target(ledger),
          cluster: 'demo',
          statefulSet: LEDGER_DB,
          gateway,
        }),
      ).rejects.toThrow(
        'You are not allowed to prune the claims of component:default/ledger (pvc-pruner.prune)',
      );
    });

    it('counts the entity asked about even when the catalog read is older than it', async () => {
      const { ownership, permissions } = checks([]);
      await ownership.authorizePrune({
        credentials: GUEST,
        target: target(orders),
        cluster: 'demo',
        statefulSet: ORDERS_DB,
        gateway,
      });
      expect(permissions.authorize.mock.calls[0][0]).toContainEqual(
        expect.objectContaining({ resourceRef: ref(orders) }),
      );
    });

    describe('a StatefulSet no other entity claims', () => {
      it('is not pruned through a selector other than the plain kubernetes-id without pvc-pruner.unowned.prune', async () => {
        const { ownership } = checks([catchAll]);
        await expect(
          ownership.authorizePrune({
            credentials: GUEST,
            target: target(catchAll),
            cluster: 'demo',
            statefulSet: STRAY,
            gateway,
          }),
        ).rejects.toThrow(
          'No entity claims StatefulSet tools/stray in cluster "demo" by the plain backstage.io/kubernetes-id label, only by selectors (component:default/everything: "!nonexistent"), which do not show the StatefulSet is anyone\'s own: pruning it needs pvc-pruner.unowned.prune (or give the StatefulSet a backstage.io/kubernetes-id label and its entity that annotation)',
        );
      });

      it('is not pruned through two catch-alls of the caller either: some claimant must select it by the plain kubernetes-id (found in review)', async () => {
        const catchAll2 = componentEntity('everything-2', {
          owner: 'checkout',
          annotations: {
            'backstage.io/kubernetes-label-selector': 'tier notin (none)',
          },
        });
        const permissions = ownersOnly();
        const mine = [ref(catchAll), ref(catchAll2)];
        permissions.authorize.mockImplementation(async requests =>
          requests.map(r => ({
            result:
              'resourceRef' in r && mine.includes(r.resourceRef!)
                ? AuthorizeResult.ALLOW
                : AuthorizeResult.DENY,
          })),
        );
        const { ownership } = checks([catchAll, catchAll2], permissions);
        await expect(
          ownership.authorizePrune({
            credentials: GUEST,
            target: target(catchAll),
            cluster: 'demo',
            statefulSet: STRAY,
            gateway,
          }),
        ).rejects.toThrow(
          /^No entity claims StatefulSet tools\/stray in cluster "demo" by the plain backstage.io\/kubernetes-id label, only by selectors \(component:default\/everything: "!nonexistent", component:default\/everything-2: "tier notin \(none\)"\).*needs pvc-pruner.unowned.prune/,
        );
      });

      it('is pruned through such a selector with pvc-pruner.unowned.prune', async () => {
        const { ownership } = checks(
          [catchAll],
          ownersOnly(['pvc-pruner.unowned.prune']),
        );
        await expect(
          ownership.authorizePrune({
            credentials: GUEST,
            target: target(catchAll),
            cluster: 'demo',
            statefulSet: STRAY,
            gateway,
          }),
        ).resolves.toEqual({
          claimants: [ref(catchAll)],
          present: [ref(catchAll)],
        });
      });

      it('is pruned through the plain kubernetes-id without it', async () => {
        const { ownership } = checks([orders]);
        await expect(
          ownership.authorizePrune({
            credentials: GUEST,
            target: target(orders),
            cluster: 'demo',
            statefulSet: ORDERS_DB,
            gateway,
          }),
        ).resolves.toEqual({
          claimants: [ref(orders)],
          present: [ref(orders)],
        });
      });
    });

    describe('without an entity (the fleet page’s Unowned section)', () => {
      it('needs pvc-pruner.unowned.prune', async () => {
        await expect(
          checks([]).ownership.authorizePrune({
            credentials: GUEST,
            cluster: 'demo',
            statefulSet: STRAY,
            gateway,
          }),
        ).rejects.toThrow(
          'No catalog entity claims StatefulSet tools/stray in cluster "demo": pruning it needs pvc-pruner.unowned.prune',
        );
        await expect(
          checks(
            [],
            ownersOnly(['pvc-pruner.unowned.prune']),
          ).ownership.authorizePrune({
            credentials: GUEST,
            cluster: 'demo',
            statefulSet: STRAY,
            gateway,
          }),
        ).resolves.toEqual({ claimants: [], present: [] });
      });

      it('refuses a StatefulSet that an entity claims, even with pvc-pruner.unowned.prune and prune on that entity', async () => {
        await expect(
          checks(
            [orders],
            ownersOnly(['pvc-pruner.unowned.prune']),
          ).ownership.authorizePrune({
            credentials: GUEST,
            cluster: 'demo',
            statefulSet: ORDERS_DB,
            gateway,
          }),
        ).rejects.toThrow(
          'StatefulSet shop/orders-db in cluster "demo" is claimed by component:default/orders: prune it from the card of the entity it belongs to',
        );
      });
    });

    it('takes more than 20 claimants for an error in the catalog: shown to nobody and pruned by nobody, without asking about each', async () => {
      const many = Array.from({ length: 25 }, (_, i) =>
        componentEntity(`catch-all-${i}`, {
          owner: 'checkout',
          annotations: {
            'backstage.io/kubernetes-label-selector': '!nonexistent',
          },
        }),
      );
      const { ownership, permissions } = checks([orders, ...many]);

      const [verdict] = await ownership.readable(GUEST, [
        { cluster: 'demo', statefulSet: ORDERS_DB },
      ]);
      expect(verdict.crowded).toBe(true);
      expect(verdict.claimants).toHaveLength(21);
      expect(verdict.refused).toEqual(verdict.claimants);
      await expect(
        ownership.authorizePrune({
          credentials: GUEST,
          target: target(orders),
          cluster: 'demo',
          statefulSet: ORDERS_DB,
          gateway,
        }),
      ).rejects.toThrow(
        /^StatefulSet shop\/orders-db in cluster "demo" is claimed by more than 20 catalog entities \(.* and 16 more\): pvc-pruner takes that as an error in the catalog and prunes it for nobody/,
      );
      expect(permissions.authorize).not.toHaveBeenCalled();
    });

    it('asks the namespace binding about every claimant once the permissions allow it', async () => {
      const namespaceOwners = new NamespaceOwners('backstage.io/owner');
      const check = jest
        .spyOn(namespaceOwners, 'check')
        .mockRejectedValue(new NotAllowedError('namespace says no'));
      const { ownership } = checks(
        [orders, catchAll],
        ownersOnly(),
        namespaceOwners,
      );

      await expect(
        ownership.authorizePrune({
          credentials: GUEST,
          target: target(orders),
          cluster: 'demo',
          statefulSet: ORDERS_DB,
          gateway,
        }),
      ).rejects.toThrow('namespace says no');
      expect(check).toHaveBeenCalledWith(gateway, 'shop', [
        expect.objectContaining({ entityRef: ref(catchAll) }),
        expect.objectContaining({ entityRef: ref(orders) }),
      ]);
    });
  });
});
