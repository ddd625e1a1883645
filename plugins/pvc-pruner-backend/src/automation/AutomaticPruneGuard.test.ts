import { mockCredentials, mockServices } from '@backstage/backend-test-utils';
import type { Entity } from '@backstage/catalog-model';
import { AuthorizeResult } from '@backstage/plugin-permission-common';
import type { V1StatefulSet } from '@kubernetes/client-node';
import {
  AUTO_PRUNE_ANNOTATION,
  PruneJob,
} from 'backstage-plugin-pvc-pruner-common';
import { componentEntity } from '../__testUtils__/catalogEntities';
import { AUTO_PRUNE_ENABLED } from '../__testUtils__/shopClaims';
import type { DeleteGuardFactory, JobRequest } from '../jobs';
import type { KubeGateway } from '../kubernetes';
import {
  ClaimantIndex,
  NamespaceOwners,
  OwnershipChecks,
  OwnershipGuards,
  workloadEntityOf,
} from '../ownership';
import { AutomaticPruneGuard } from './AutomaticPruneGuard';

const options = AUTO_PRUNE_ENABLED;

const orders = componentEntity('orders', {
  annotations: {
    'backstage.io/kubernetes-id': 'orders',
    [AUTO_PRUNE_ANNOTATION]: '7d',
  },
});
/** Claims what carries team=ledger; has not opted in. */
const ledger = componentEntity('ledger', {
  annotations: { 'backstage.io/kubernetes-label-selector': 'team=ledger' },
});

let entities: Entity[];
let reads: number;
const workloads = {
  fresh: async () => {
    reads++;
    return new ClaimantIndex(entities.flatMap(e => workloadEntityOf(e) ?? []));
  },
  warm: async () =>
    new ClaimantIndex(entities.flatMap(e => workloadEntityOf(e) ?? [])),
};

const job = {
  cluster: 'demo',
  namespace: 'shop',
  statefulSet: 'orders-db',
} as PruneJob;
const gateway = {} as KubeGateway;

function labelled(labels: Record<string, string>): V1StatefulSet {
  return { metadata: { name: 'orders-db', namespace: 'shop', labels } };
}

const automatic: JobRequest = {
  credentials: mockCredentials.service('plugin:pvc-pruner'),
  target: workloadEntityOf(orders),
  automatic: { runId: 'run-1', onBehalfOf: 'component:default/orders' },
};

/** Starts a guard (the automatic one unless told) for the StatefulSet as `statefulSet` has it. */
function startGuard(
  statefulSet: () => V1StatefulSet,
  request: JobRequest = automatic,
  factory: DeleteGuardFactory = new AutomaticPruneGuard({ options, workloads }),
) {
  return factory.start({ job, gateway, statefulSet, request });
}

beforeEach(() => {
  entities = [orders, ledger];
  reads = 0;
});

describe('AutomaticPruneGuard', () => {
  it('lets the job run while every claimant is opted in, judging again only what changed', async () => {
    let sts = labelled({ 'backstage.io/kubernetes-id': 'orders' });
    const guard = await startGuard(() => sts);
    for (let i = 0; i < 3; i++) {
      sts = { ...sts };
      expect(guard.abortReason).toBeUndefined();
    }
    expect(reads).toBe(1);
  });

  it('stops the job before its next delete when the StatefulSet’s labels make an entity that has not opted in claim it', async () => {
    let sts = labelled({ 'backstage.io/kubernetes-id': 'orders' });
    const guard = await startGuard(() => sts);
    sts = labelled({ 'backstage.io/kubernetes-id': 'orders', team: 'ledger' });

    expect(guard.abortReason).toBe(
      `automatic pruning may no longer act on StatefulSet shop/orders-db: it is also claimed by component:default/ledger, which has not opted in (${AUTO_PRUNE_ANNOTATION}); every entity that claims a StatefulSet must opt in`,
    );
  });

  it('stops the job once the live check’s catalog read shows the entity withdrew its opt-in', async () => {
    const sts = labelled({ 'backstage.io/kubernetes-id': 'orders' });
    const guard = await startGuard(() => sts);
    entities = [componentEntity('orders'), ledger];
    expect(guard.abortReason).toBeUndefined();

    await guard.confirmLive(gateway);

    expect(guard.abortReason).toBe(
      `automatic pruning may no longer act on StatefulSet shop/orders-db: component:default/orders is no longer opted in (${AUTO_PRUNE_ANNOTATION})`,
    );
  });

  it('refuses a job that is not automatic, and one whose catalog read fails', async () => {
    const sts = () => labelled({ 'backstage.io/kubernetes-id': 'orders' });
    const notAutomatic = await startGuard(sts, {
      ...automatic,
      automatic: undefined,
    });
    expect(notAutomatic.abortReason).toMatch(/not an automatic prune/);

    const failing = await new AutomaticPruneGuard({
      options,
      workloads: {
        fresh: async () => {
          throw new Error('catalog down');
        },
      },
    }).start({ job, gateway, statefulSet: sts, request: automatic });
    expect(failing.abortReason).toBe(
      'the catalog could not be read to confirm the opt-in: catalog down',
    );
  });

  describe('beside OwnershipGuards, run with the plugin’s own credentials', () => {
    // Backstage's permission framework allows a service principal everything.
    const ownershipGuards = () =>
      new OwnershipGuards(
        new OwnershipChecks({
          permissions: mockServices.permissions({
            result: AuthorizeResult.ALLOW,
          }),
          workloads: workloads as never,
          namespaceOwners: new NamespaceOwners(),
        }),
        workloads as never,
      );

    it('OwnershipGuards still stops a job whose entity no longer claims the StatefulSet', async () => {
      const guard = await startGuard(
        () => labelled({ team: 'ledger' }),
        automatic,
        ownershipGuards(),
      );
      expect(guard.abortReason).toMatch(
        /^component:default\/orders no longer claims StatefulSet shop\/orders-db/,
      );
    });

    it('OwnershipGuards lets through what only a selector claims, as the framework allows it; the automatic guard does not', async () => {
      entities = [
        componentEntity('orders', {
          annotations: {
            'backstage.io/kubernetes-label-selector': 'team=orders',
            [AUTO_PRUNE_ANNOTATION]: '7d',
          },
        }),
      ];
      const request = { ...automatic, target: workloadEntityOf(entities[0]) };
      const statefulSet = () => labelled({ team: 'orders' });

      const ownership = await startGuard(
        statefulSet,
        request,
        ownershipGuards(),
      );
      const automation = await startGuard(statefulSet, request);

      expect(ownership.abortReason).toBeUndefined();
      expect(automation.abortReason).toMatch(/only label selectors claim it/);
    });
  });
});
