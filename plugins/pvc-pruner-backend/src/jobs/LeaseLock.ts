import { ConflictError } from '@backstage/errors';
import type { V1Lease } from '@kubernetes/client-node';
import { ClusterRequestError, KubeGateway } from '../kubernetes';

export const REQUESTED_BY_ANNOTATION = 'pvc-pruner.backstage.io/requested-by';
export const JOB_ANNOTATION = 'pvc-pruner.backstage.io/job-id';

/** The Lease that serialises prunes of one StatefulSet, across users and Backstage replicas. */
export function leaseNameFor(statefulSet: string) {
  return `pvc-pruner-${statefulSet}`.slice(0, 253);
}

export interface HeldLease {
  name: string;
  namespace: string;
  /** Renews the lease; throws when someone else took it. */
  renew(): Promise<void>;
  release(): Promise<void>;
}

function isExpired(lease: V1Lease, now: number) {
  const renewed = lease.spec?.renewTime ?? lease.spec?.acquireTime;
  const duration = lease.spec?.leaseDurationSeconds ?? 0;
  return !renewed || new Date(renewed).getTime() + duration * 1000 < now;
}

function describeHolder(lease: V1Lease) {
  const who =
    lease.metadata?.annotations?.[REQUESTED_BY_ANNOTATION] ??
    lease.spec?.holderIdentity ??
    'another process';
  const since = lease.spec?.acquireTime
    ? new Date(lease.spec.acquireTime).toISOString()
    : 'an unknown time';
  return `${who} (job ${
    lease.metadata?.annotations?.[JOB_ANNOTATION] ?? 'unknown'
  }) since ${since}`;
}

/**
 * A coordination.k8s.io Lease used as a mutex. Taking it creates the Lease,
 * or takes over an expired one with an optimistic update; a live holder
 * makes it a ConflictError that names who holds it and since when.
 */
export class LeaseLock {
  constructor(
    private readonly leaseDurationSeconds: number,
    private readonly holderPrefix: string,
  ) {}

  async acquire(
    gateway: KubeGateway,
    target: {
      namespace: string;
      statefulSet: string;
      jobId: string;
      requestedBy: string;
      dryRun: boolean;
    },
  ): Promise<HeldLease> {
    const name = leaseNameFor(target.statefulSet);
    const { namespace } = target;
    const now = new Date();
    const desired: V1Lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: {
        name,
        namespace,
        annotations: {
          [REQUESTED_BY_ANNOTATION]: target.requestedBy,
          [JOB_ANNOTATION]: target.jobId,
        },
      },
      spec: {
        holderIdentity: `${this.holderPrefix}/${target.jobId}`,
        leaseDurationSeconds: this.leaseDurationSeconds,
        acquireTime: now,
        renewTime: now,
      },
    };
    const existing = await gateway.readLease(namespace, name);
    if (existing && !isExpired(existing, now.getTime())) {
      throw new ConflictError(
        `StatefulSet ${namespace}/${
          target.statefulSet
        } is being pruned by ${describeHolder(existing)}`,
      );
    }
    if (target.dryRun) {
      // A dry run checks that the lock is free but does not hold it.
      if (!existing) await gateway.createLease(namespace, desired, true);
      return {
        name,
        namespace,
        renew: async () => {},
        release: async () => {},
      };
    }
    let held: V1Lease;
    try {
      held = existing
        ? await gateway.replaceLease(namespace, {
            ...desired,
            metadata: {
              ...desired.metadata,
              resourceVersion: existing.metadata?.resourceVersion,
            },
            spec: {
              ...desired.spec,
              leaseTransitions: (existing.spec?.leaseTransitions ?? 0) + 1,
            },
          })
        : await gateway.createLease(namespace, desired);
    } catch (e) {
      if (e instanceof ClusterRequestError && e.statusCode === 409) {
        const winner = await gateway.readLease(namespace, name);
        throw new ConflictError(
          `StatefulSet ${namespace}/${target.statefulSet} is being pruned by ${
            winner ? describeHolder(winner) : 'another process'
          }`,
        );
      }
      throw e;
    }
    return {
      name,
      namespace,
      renew: async () => {
        held = await gateway.replaceLease(namespace, {
          ...held,
          spec: { ...held.spec, renewTime: new Date() },
        });
      },
      release: async () => {
        await gateway.deleteLease(namespace, name, {
          uid: held.metadata!.uid!,
          resourceVersion: held.metadata!.resourceVersion,
        });
      },
    };
  }
}
