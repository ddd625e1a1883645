import { createHash, randomUUID } from 'node:crypto';
import type {
  BackstageCredentials,
  BackstageUserPrincipal,
} from '@backstage/backend-plugin-api';
import { ConflictError, InputError, NotFoundError } from '@backstage/errors';
import type { KubernetesRequestAuth } from '@backstage/plugin-kubernetes-common';
import type {
  PruneJob,
  ReclaimRequest,
} from 'backstage-plugin-pvc-pruner-common';
import { PruneJobStore } from '../database';
import { clusterFailure, KubeGateway, KubeGateways } from '../kubernetes';
import type { JobOutcomeReporter, LeaseLock, PruneJobs } from '../jobs';
import type { RunningJobLimits } from '../limits';
import { mapLimited } from '../mapLimited';
import type {
  NamespaceOwners,
  WorkloadCatalog,
  WorkloadEntity,
} from '../ownership';
import { ReclaimPermissions } from './ReclaimPermissions';
import { readReclaimContext } from './reclaimContext';
import {
  releasedVolumeFacts,
  unmanagedReason,
  whyNotReclaimable,
} from './releasedVolumeRule';
import { Attribution, VolumeAttribution } from './VolumeAttribution';
import { SeenVolume, VolumeReclaimRunner } from './VolumeReclaimRunner';

/**
 * Not `pvc-pruner-reclaim-`: that is also the prune Lease (leaseNameFor) of
 * a StatefulSet named `reclaim-<namespace>` in the lease namespace. After
 * `pvc-pruner-` a StatefulSet's name cannot start with a hyphen.
 */
const RECLAIM_LEASE_PREFIX = 'pvc-pruner--reclaim-';
/** Kept to a label's length, though a Lease's name may be longer, so it reads in kubectl's columns. */
const MAX_LEASE_NAME = 63;

/**
 * The Lease that serialises reclaims of the volumes of one namespace's
 * claims: `pvc-pruner--reclaim-<namespace>`, kept in the namespace the
 * plugin is configured with (`pvcPruner.reclaim.leaseNamespace`), not in the
 * claims' own. Released volumes mostly come from a deleted namespace, and
 * the API server refuses to create anything in one that is missing (404)
 * or Terminating (403). One Lease per claim namespace means two jobs never
 * reclaim the same volume at once, whatever sets of volumes they name. A
 * name past the 63 characters kept is cut and suffixed with a hash of the
 * whole, so two namespaces never share a Lease.
 */
export function reclaimLeaseName(claimNamespace: string): string {
  const name = `${RECLAIM_LEASE_PREFIX}${claimNamespace}`;
  if (name.length <= MAX_LEASE_NAME) return name;
  const hash = createHash('sha256').update(claimNamespace).digest('hex');
  return `${name.slice(0, MAX_LEASE_NAME - 11)}-${hash.slice(0, 10)}`;
}

/** Before the volumes are traced, a reclaim is counted against the user's limit only (no StatefulSet has this name). */
const RECLAIM_SCOPE = '';

const READ_CONCURRENCY = 8;

/**
 * Starts reclaim jobs: checks live that each volume is still what the
 * caller saw and reclaimable, authorizes the caller on whatever each
 * volume is traced to, takes the namespace's reclaim Lease, stores the job
 * and runs it in the background, heartbeated like a prune.
 */
export class VolumeReclaimJobs {
  constructor(
    private readonly deps: {
      store: PruneJobStore;
      runner: VolumeReclaimRunner;
      gateways: KubeGateways;
      lock: LeaseLock;
      limits: RunningJobLimits;
      jobs: Pick<PruneJobs, 'adopt'>;
      attribution: VolumeAttribution;
      permissions: ReclaimPermissions;
      /** The platform's binding of namespaces to owners, checked as for a prune. */
      namespaceOwners: NamespaceOwners;
      workloads: Pick<WorkloadCatalog, 'warm'>;
      /** Where reclaim Leases are kept (pvcPruner.reclaim.leaseNamespace). */
      leaseNamespace: string;
    },
  ) {}

  async start(options: {
    request: ReclaimRequest;
    credentials: BackstageCredentials<BackstageUserPrincipal>;
    reporter: JobOutcomeReporter;
    requestAuth?: KubernetesRequestAuth;
  }): Promise<PruneJob> {
    const { request, credentials, reporter } = options;
    const requestedBy = credentials.principal.userEntityRef;
    const names = request.volumes.map(v => v.name);
    if (new Set(names).size !== names.length)
      throw new InputError('volumes lists the same volume more than once');
    const scope = {
      requestedBy,
      cluster: request.cluster,
      namespace: request.namespace,
      statefulSet: RECLAIM_SCOPE,
    };
    await this.deps.limits.ensureRoom(scope);
    const gateway = await this.gatewayFor(request, options.requestAuth);
    const attributions = await this.checked(gateway, request).catch(e => {
      throw clusterFailure(e);
    });
    await this.deps.permissions.authorize(
      credentials,
      request.volumes.map(v => ({
        name: v.name,
        attribution: attributions.get(v.claimUid)!,
      })),
    );
    if (
      request.entityRef &&
      ![...attributions.values()].every(a =>
        a.claimants.includes(request.entityRef!),
      )
    )
      throw new InputError(
        `Not every volume's claim belonged to ${request.entityRef}: reclaim them from the fleet page`,
      );
    await this.checkNamespaceOwners(gateway, request.namespace, [
      ...attributions.values(),
    ]);
    const statefulSets = new Set(
      [...attributions.values()].map(a => a.statefulSet?.name ?? ''),
    );
    const id = randomUUID();
    const lease = await this.deps.lock
      .acquire(gateway, {
        namespace: this.deps.leaseNamespace,
        statefulSet: '',
        leaseName: reclaimLeaseName(request.namespace),
        reclaimsIn: request.namespace,
        jobId: id,
        requestedBy,
        dryRun: Boolean(request.dryRun),
      })
      .catch(e => {
        throw clusterFailure(e);
      });
    // Counted, once stored, with the jobs of the StatefulSet the volumes were traced to.
    const statefulSet = statefulSets.size === 1 ? [...statefulSets][0] : '';
    const tracedTo = tracedClaimants([...attributions.values()]);
    // In the owner's history even when reclaimed from the fleet page: the sole entity it is traced to.
    const entityRef =
      request.entityRef ??
      (tracedTo.claimants.length === 1 && tracedTo.unverified.length === 0
        ? tracedTo.claimants[0]
        : undefined);
    let job: PruneJob;
    try {
      job = await this.deps.limits.admit(
        { ...scope, statefulSet },
        () =>
          this.deps.store.createJob({
            id,
            kind: 'reclaim',
            entityRef,
            tracedTo,
            cluster: request.cluster,
            namespace: request.namespace,
            statefulSet,
            dryRun: Boolean(request.dryRun),
            requestedBy,
            pvcs: request.volumes.map(v => ({ name: v.name, uid: v.uid })),
          }),
        stored => this.deps.store.deleteJob(stored.id),
      );
      const volumes: SeenVolume[] = request.volumes.map(v => ({
        ...v,
        claimNamespace: request.namespace,
      }));
      await this.deps.jobs.adopt(job.id, stop =>
        this.deps.runner
          .run(job, gateway, lease, volumes, stop)
          .then(result => reporter.finished(job, result))
          .catch(e => reporter.crashed(job, e as Error)),
      );
    } catch (e) {
      await lease.release().catch(() => undefined);
      throw e;
    }
    return job;
  }

  /** With the namespace binding on, the claims' Namespace must name the owner of every entity the volumes are traced to. */
  private async checkNamespaceOwners(
    gateway: KubeGateway,
    namespace: string,
    attributions: Attribution[],
  ) {
    const claimants = new Set(attributions.flatMap(a => a.claimants));
    if (!this.deps.namespaceOwners.enabled || claimants.size === 0) return;
    const unverified = new Set(attributions.flatMap(a => a.unverified));
    const index = await this.deps.workloads.warm();
    // A claimant gone from the catalog, or re-created, has no owner to name: only its own ref can be named.
    const entities = [...claimants].map(
      ref =>
        (!unverified.has(ref) && index.get(ref)) ||
        ({ entityRef: ref } as WorkloadEntity),
    );
    await this.deps.namespaceOwners
      .check(gateway, namespace, entities)
      .catch(e => {
        throw clusterFailure(e);
      });
  }

  private async gatewayFor(
    request: ReclaimRequest,
    requestAuth?: KubernetesRequestAuth,
  ): Promise<KubeGateway> {
    try {
      return await this.deps.gateways.for(request.cluster, requestAuth);
    } catch (e) {
      if (e instanceof NotFoundError)
        throw new InputError(`Unknown cluster "${request.cluster}"`);
      throw clusterFailure(e);
    }
  }

  /**
   * Reads each volume and its claim live: a volume not Released, to another
   * claim uid, changed since the caller saw it, whose claim exists, or
   * statically provisioned is refused before anything is written. Returns
   * the volumes' attributions by claim uid.
   */
  private async checked(
    gateway: KubeGateway,
    request: ReclaimRequest,
  ): Promise<Map<string, Attribution>> {
    await mapLimited(request.volumes, READ_CONCURRENCY, async seen => {
      const pv = await gateway.readVolume(seen.name);
      const facts = pv && releasedVolumeFacts(pv);
      if (facts && facts.claim.namespace !== request.namespace)
        throw new InputError(
          `Volume ${seen.name} was Released by a claim in namespace ${facts.claim.namespace}, not ${request.namespace}`,
        );
      const live = await readReclaimContext(gateway, facts);
      const why = whyNotReclaimable(pv, seen, live);
      if (why && facts && why === unmanagedReason(facts, live.classProvisioner))
        throw new InputError(`Volume ${seen.name} cannot be reclaimed: ${why}`);
      if (why)
        throw new ConflictError(
          `Volume ${seen.name} was not reclaimed: ${why}`,
        );
      if (pv?.metadata?.resourceVersion !== seen.resourceVersion)
        throw new ConflictError(
          `Volume ${seen.name} changed since it was listed; list the volumes again`,
        );
    });
    return this.deps.attribution.of(
      request.cluster,
      request.volumes.map(v => v.claimUid),
      { fresh: true },
    );
  }
}

/** Every entity the volumes are traced to, and those of them whose recorded entity is gone or re-created, sorted. */
function tracedClaimants(attributions: Attribution[]) {
  const sorted = (refs: string[]) => [...new Set(refs)].sort();
  return {
    claimants: sorted(attributions.flatMap(a => a.claimants)),
    unverified: sorted(attributions.flatMap(a => a.unverified)),
  };
}
