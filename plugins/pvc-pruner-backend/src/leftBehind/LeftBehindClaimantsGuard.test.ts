import { mockCredentials, mockServices } from '@backstage/backend-test-utils';
import { Entity, stringifyEntityRef } from '@backstage/catalog-model';
import type { CatalogService } from '@backstage/plugin-catalog-node';
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import type { PruneJob } from 'backstage-plugin-pvc-pruner-common';
import type { KubeGateway } from '../kubernetes';
import { componentEntity } from '../__testUtils__/catalogEntities';
import {
  NamespaceOwners,
  OwnershipChecks,
  WorkloadCatalog,
  workloadEntityOf,
} from '../ownership';
import { ledgerGroup } from '../__testUtils__/ledgerGroup';
import { permissionsOn } from '../__testUtils__/permissionsOn';
import { LeftBehindAccess } from './LeftBehindAccess';

const ledger = componentEntity('ledger', { owner: 'payments' });
/** An entity whose selector matches the ledger claims' labels, once a catalog author adds it. */
const selecting = (name: string) =>
  componentEntity(name, {
    owner: 'checkout',
    annotations: { 'backstage.io/kubernetes-label-selector': 'app=ledger' },
  });
const ref = (e: Entity) => stringifyEntityRef(e);

const claim: V1PersistentVolumeClaim = {
  metadata: {
    name: 'data-ledger-db-0',
    namespace: 'payments',
    uid: 'claim-0',
    labels: { app: 'ledger' },
  },
};

const group = ledgerGroup();

/** A prune of the ledger's left-behind claim by a guest who may prune `mine`; `catalog` is what the catalog holds now. */
async function startedJob(mine: Entity[]) {
  const catalog = { entities: [ledger] };
  const permissions = permissionsOn(mine);
  const workloads = new WorkloadCatalog(
    {
      catalog: {
        getEntities: async () => ({ items: catalog.entities }),
      } as unknown as CatalogService,
      auth: mockServices.auth(),
      logger: mockServices.logger.mock(),
    },
    // Every read a new one: the catalog changes while the job runs.
    { maxAgeMs: 0, maxStaleMs: 0 },
  );
  const ownership = new OwnershipChecks({
    permissions,
    workloads,
    namespaceOwners: new NamespaceOwners(),
  });
  const access = new LeftBehindAccess({
    permissions,
    finder: { groupsIn: async () => [group] },
    ownership,
    workloads,
  });
  const gateway = {
    cluster: 'prod',
    listClaims: async () => [claim],
  } as unknown as KubeGateway;
  const request = await access.authorizePrune({
    request: {
      entityRef: ref(ledger),
      cluster: 'prod',
      namespace: 'payments',
      statefulSet: 'ledger-db',
      pvcs: [{ name: 'data-ledger-db-0', uid: 'claim-0' }],
      leftBy: { evidence: 'lineage', statefulSetUid: 'deleted-uid' },
    },
    target: workloadEntityOf(ledger),
    credentials: mockCredentials.user('user:default/guest'),
    gateway,
  });
  const guards = await Promise.all(
    (request.guards ?? []).map(f =>
      f.start({
        job: { cluster: 'prod', namespace: 'payments' } as PruneJob,
        gateway,
        statefulSet: () => ({}),
      }),
    ),
  );
  /** The job's check before its next delete: why it stops, if it does. */
  const checkBeforeDelete = async () => {
    await Promise.all(guards.map(g => g.confirmLive(gateway)));
    return guards.find(g => g.abortReason)?.abortReason;
  };
  return { catalog, checkBeforeDelete };
}

describe('LeftBehindClaimantsGuard', () => {
  it('stops the job before its next delete when a selector added mid-job makes an entity the requester may not prune a claimant', async () => {
    const { catalog, checkBeforeDelete } = await startedJob([ledger]);
    expect(await checkBeforeDelete()).toBeUndefined();

    catalog.entities = [ledger, selecting('grabber')];

    expect(await checkBeforeDelete()).toBe(
      'the claimants of the claims left by StatefulSet payments/ledger-db changed during the job (a selector now matches their labels): now also component:default/grabber. StatefulSet payments/ledger-db in cluster "prod" is also claimed by component:default/grabber: pruning it needs pvc-pruner.prune on every entity that claims it, and you lack it on that one',
    );
  });

  it('goes on when the requester may prune on the new claimant too', async () => {
    const grabber = selecting('grabber');
    const { catalog, checkBeforeDelete } = await startedJob([ledger, grabber]);
    catalog.entities = [ledger, grabber];
    expect(await checkBeforeDelete()).toBeUndefined();
  });
  it('stops the job before its next delete when the recorded claimant is registered again under its ref (another uid) mid-job: that ref no longer stands for who claimed the claims', async () => {
    // The request passed while the catalog still had the recorded ledger (as a warm read up to maxStaleMs old has it).
    const { catalog, checkBeforeDelete } = await startedJob([ledger]);
    expect(await checkBeforeDelete()).toBeUndefined();

    // ledger removed, and component:default/ledger registered again by someone else.
    catalog.entities = [
      componentEntity('ledger', { owner: 'mallory', uid: 'uid-ledger-again' }),
    ];

    expect(await checkBeforeDelete()).toMatch(/pvc-pruner\.unowned\.prune/);
  });

  it('stops the job before its next delete when the recorded claimant leaves the catalog mid-job and the requester lacks pvc-pruner.unowned.prune', async () => {
    const { catalog, checkBeforeDelete } = await startedJob([ledger]);
    catalog.entities = [];
    expect(await checkBeforeDelete()).toMatch(/pvc-pruner\.unowned\.prune/);
  });
});
