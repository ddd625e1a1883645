import { mockCredentials, mockServices } from '@backstage/backend-test-utils';
import { catalogServiceMock } from '@backstage/plugin-catalog-node/testUtils';
import { AuthorizeResult } from '@backstage/plugin-permission-common';
import type { V1StatefulSet } from '@kubernetes/client-node';
import type { PruneJob } from 'backstage-plugin-pvc-pruner-common';
import type { KubeGateway } from '../kubernetes';
import { componentEntity } from '../__testUtils__/catalogEntities';
import { NamespaceOwners } from './NamespaceOwners';
import { OwnershipChecks } from './OwnershipChecks';
import { OwnershipGuards } from './OwnershipGuard';
import { WorkloadCatalog } from './WorkloadCatalog';
import { workloadEntityOf } from './WorkloadEntity';

const orders = componentEntity('orders', { owner: 'checkout' });
const ledger = componentEntity('ledger', {
  owner: 'payments',
  annotations: {
    'backstage.io/kubernetes-label-selector': 'pvc-pruner.test/also=ledger',
  },
});
const job = { cluster: 'demo', namespace: 'shop' } as PruneJob;
const gateway = {} as KubeGateway;

function labelled(id: string): V1StatefulSet {
  return {
    metadata: {
      name: 'orders-db',
      namespace: 'shop',
      labels: { 'backstage.io/kubernetes-id': id },
    },
  };
}

function guards(allowed: string[] = ['component:default/orders']) {
  const catalog = catalogServiceMock({ entities: [orders, ledger] });
  jest.spyOn(catalog, 'getEntities');
  const permissions = mockServices.permissions.mock();
  permissions.authorize.mockImplementation(async requests =>
    requests.map(r => ({
      result: allowed.includes(
        'resourceRef' in r && r.resourceRef ? r.resourceRef : r.permission.name,
      )
        ? AuthorizeResult.ALLOW
        : AuthorizeResult.DENY,
    })),
  );
  const workloads = new WorkloadCatalog({
    catalog,
    auth: mockServices.auth(),
    logger: mockServices.logger.mock(),
  });
  const ownership = new OwnershipChecks({
    permissions,
    workloads,
    namespaceOwners: new NamespaceOwners(),
  });
  return {
    factory: new OwnershipGuards(ownership, workloads),
    catalog,
    permissions,
  };
}

const request = {
  credentials: mockCredentials.user('user:default/guest'),
  target: workloadEntityOf(orders),
};

describe('OwnershipGuards', () => {
  it('authorizes the job again as it starts, from a catalog read of its own, and then reads the catalog no more', async () => {
    const { factory, catalog, permissions } = guards();
    let sts = labelled('orders');

    const guard = await factory.start({
      job,
      gateway,
      statefulSet: () => sts,
      request,
    });
    for (let i = 0; i < 5; i++) {
      sts = { ...labelled('orders') };
      expect(guard.abortReason).toBeUndefined();
    }

    expect(catalog.getEntities).toHaveBeenCalledTimes(1);
    expect(permissions.authorize).toHaveBeenCalledTimes(1);
  });

  it('stops the job before its next delete when the StatefulSet’s labels now make an entity it was not authorized on claim it', async () => {
    const { factory } = guards();
    let sts = labelled('orders');
    const guard = await factory.start({
      job,
      gateway,
      statefulSet: () => sts,
      request,
    });

    sts = {
      ...sts,
      metadata: {
        ...sts.metadata,
        labels: { 'backstage.io/kubernetes-id': 'orders', app: 'x' },
      },
    };
    expect(guard.abortReason).toBeUndefined();
    sts = {
      ...sts,
      metadata: {
        ...sts.metadata,
        labels: {
          'backstage.io/kubernetes-id': 'orders',
          'backstage.io/kubernetes-id-2': 'x',
        },
      },
    };
    expect(guard.abortReason).toBeUndefined();
    sts = {
      ...sts,
      metadata: {
        ...sts.metadata,
        labels: {
          'backstage.io/kubernetes-id': 'orders',
          'pvc-pruner.test/also': 'ledger',
        },
      },
    };
    expect(guard.abortReason).toBe(
      'the claimants of StatefulSet shop/orders-db changed during the job (its labels changed): now also component:default/ledger, so this prune is no longer the one authorized',
    );
  });

  it('stops the job when an entity it was authorized on stops claiming the StatefulSet (what vouched for it may be gone)', async () => {
    const { factory } = guards();
    let sts = labelled('orders');
    const guard = await factory.start({
      job,
      gateway,
      statefulSet: () => sts,
      request,
    });
    sts = labelled('cart');
    expect(guard.abortReason).toBe(
      'the claimants of StatefulSet shop/orders-db changed during the job (its labels changed): no longer component:default/orders, so this prune is no longer the one authorized',
    );
  });

  it('refuses as the job starts when the entity it went through no longer claims the StatefulSet, in a read made after the job started', async () => {
    const guard = await guards().factory.start({
      job: { ...job, statefulSet: 'orders-db' },
      gateway,
      // The StatefulSet lost its kubernetes-id label between the POST and the job's start.
      statefulSet: () => ({
        metadata: { name: 'orders-db', namespace: 'shop', labels: {} },
      }),
      request,
    });
    expect(guard.abortReason).toBe(
      "component:default/orders no longer claims StatefulSet shop/orders-db (its Kubernetes annotations or the StatefulSet's labels changed, or it left the catalog)",
    );
  });

  it('stops the job before any delete when the check as it starts refuses (the catalog changed since the POST)', async () => {
    const { factory } = guards();
    const guard = await factory.start({
      job,
      gateway,
      // By now ledger claims it too.
      statefulSet: () => ({
        metadata: {
          name: 'orders-db',
          namespace: 'shop',
          labels: {
            'backstage.io/kubernetes-id': 'orders',
            'pvc-pruner.test/also': 'ledger',
          },
        },
      }),
      request: {
        ...request,
        target: workloadEntityOf(orders),
      },
    });
    expect(guard.abortReason).toMatch(
      /^the ownership check when the job started refused it: StatefulSet shop\/orders-db in cluster "demo" is also claimed by component:default\/ledger/,
    );
  });

  it('refuses a job run without its request', async () => {
    const guard = await guards().factory.start({
      job,
      gateway,
      statefulSet: () => labelled('orders'),
    });
    expect(guard.abortReason).toBe(
      'the job has no request to check who may prune this StatefulSet',
    );
  });

  describe('a recorded claimant (a deleted StatefulSet’s) no longer in the catalog', () => {
    const leftBehind = {
      ...request,
      alsoClaimedBy: [
        { ref: 'component:default/gone', uid: 'uid-gone' },
        { ref: 'component:default/orders', uid: 'uid-orders' },
      ],
    };

    it('refuses as the job starts without pvc-pruner.unowned.prune, naming it', async () => {
      const guard = await guards().factory.start({
        job,
        gateway,
        statefulSet: () => labelled('orders'),
        request: leftBehind,
      });
      expect(guard.abortReason).toMatch(
        /refused it: .* was recorded as claimed by component:default\/gone, no longer in the catalog/,
      );
    });

    it('with it, lets the job run, the recorded claimant counted among those authorized', async () => {
      const guard = await guards([
        'component:default/orders',
        'pvc-pruner.unowned.prune',
      ]).factory.start({
        job,
        gateway,
        statefulSet: () => labelled('orders'),
        request: leftBehind,
      });
      expect(guard.abortReason).toBeUndefined();
    });
  });
});
