import { ConflictError } from '@backstage/errors';
import type { V1Lease } from '@kubernetes/client-node';
import { ClusterRequestError, KubeGateway } from '../kubernetes';

export const REQUESTED_BY_ANNOTATION = 'pvc-pruner.backstage.io/requested-by';
export const JOB_ANNOTATION = 'pvc-pruner.backstage.io/job-id';
/**
 * The holderIdentity the two annotations above were written for. A holder
 * that takes the Lease over without rewriting them (another tool, a hand
 * edit) leaves them describing someone else: they are believed only while
 * this equals `spec.holderIdentity`.
 */
export const HOLDER_ANNOTATION = 'pvc-pruner.backstage.io/holder-identity';

/** A Lease's fields are the cluster's to write: none is quoted at any length. */
const MAX_QUOTED = 253;
const quoted = (value: string) =>
  value.length > MAX_QUOTED ? `${value.slice(0, MAX_QUOTED)}…` : value;

/** The Lease that serialises prunes of one StatefulSet, across users and Backstage replicas. */
export function leaseNameFor(statefulSet: string) {
  return `pvc-pruner-${statefulSet}`.slice(0, 253);
}

/** The clock every replica shares (the database's): Lease times are written and judged by it. */
export interface SharedClock {
  currentTime(): Promise<Date>;
}

/** The job no longer holds its Lease (another holder has it), or cannot prove that it does. */
export class LeaseLostError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LeaseLostError';
  }
}

export interface HeldLease {
  name: string;
  namespace: string;
  /** Renews the lease now; a LeaseLostError when someone else holds it. */
  renew(): Promise<void>;
  /**
   * Proves the lease is still held before a delete: free while the last
   * renewal is recent (see `isFresh`), otherwise it renews first. A
   * LeaseLostError when another holder has it or the renewal fails.
   */
  confirm(): Promise<void>;
  /** Whether the last successful renewal is recent enough to act on, by this process's monotonic clock. */
  isFresh(): boolean;
  release(): Promise<void>;
}

function isExpired(lease: V1Lease, now: number) {
  const renewed = lease.spec?.renewTime ?? lease.spec?.acquireTime;
  const duration = lease.spec?.leaseDurationSeconds ?? 0;
  return !renewed || new Date(renewed).getTime() + duration * 1000 < now;
}

/**
 * Who holds the Lease now, for a 409 or a lost Lease: its holderIdentity, or
 * the user and job our annotations name when they were written for that
 * very holder.
 */
function describeHolder(lease: V1Lease) {
  const acquired = new Date(lease.spec?.acquireTime ?? Number.NaN);
  const since = Number.isNaN(acquired.getTime())
    ? 'an unknown time'
    : acquired.toISOString();
  const holder = lease.spec?.holderIdentity;
  if (!holder)
    return `another process (the Lease names no holder) since ${since}`;
  const annotations = lease.metadata?.annotations ?? {};
  const requestedBy = annotations[REQUESTED_BY_ANNOTATION];
  if (annotations[HOLDER_ANNOTATION] === holder && requestedBy) {
    const job = annotations[JOB_ANNOTATION] ?? 'unknown';
    return `${quoted(requestedBy)} (job ${quoted(job)}) since ${since}`;
  }
  return `${quoted(holder)} since ${since}`;
}

export interface LeaseLockOptions {
  leaseDurationSeconds: number;
  /** Names this process in holderIdentity: `<holderPrefix>/<jobId>`. */
  holderPrefix: string;
  /** The shared clock by which renewTime is written and expiry judged. */
  clock: SharedClock;
  /** This process's monotonic clock in ms (performance.now); for tests. */
  monotonicNow?: () => number;
}

/**
 * A coordination.k8s.io Lease used as a mutex. Taking it creates the Lease,
 * or takes over an expired one with an optimistic update; a live holder
 * makes it a ConflictError that names who holds it and since when.
 *
 * Two clocks, each used for what it can answer. Whether a Lease has expired
 * is judged by the shared clock (renewTime is written from it too), so skew
 * between replicas' wall clocks cannot make two holders. Whether this holder
 * may still act is judged by its own monotonic clock since it sent its last
 * successful renewal: a renewal is trusted for two thirds of the lease
 * duration, the last third being the margin for a delete to reach the API
 * server. A process frozen (SIGSTOP, a long GC pause) past that finds its
 * lease stale when it wakes, and must renew, which fails if another holder
 * took over, before it deletes anything.
 */
export class LeaseLock {
  private readonly monotonicNow: () => number;

  constructor(private readonly options: LeaseLockOptions) {
    this.monotonicNow = options.monotonicNow ?? (() => performance.now());
  }

  async acquire(
    gateway: KubeGateway,
    target: {
      namespace: string;
      statefulSet: string;
      jobId: string;
      requestedBy: string;
      dryRun: boolean;
      /** Another Lease than the StatefulSet's, for a job of another concern (a reclaim). */
      leaseName?: string;
      /** For a reclaim Lease: the namespace whose claims' volumes it serialises, for the refusal. */
      reclaimsIn?: string;
    },
  ): Promise<HeldLease> {
    const { leaseDurationSeconds, holderPrefix, clock } = this.options;
    const name = target.leaseName ?? leaseNameFor(target.statefulSet);
    const { namespace } = target;
    const label = `${namespace}/${name}`;
    const identity = `${holderPrefix}/${target.jobId}`;
    const busy = (holder: string) =>
      target.reclaimsIn === undefined
        ? `StatefulSet ${namespace}/${target.statefulSet} is being pruned by ${holder}`
        : `Volumes of claims in ${target.reclaimsIn} are being reclaimed by ${holder}`;
    let renewedAt = this.monotonicNow();
    const now = await clock.currentTime();
    const desired: V1Lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: {
        name,
        namespace,
        annotations: {
          [REQUESTED_BY_ANNOTATION]: target.requestedBy,
          [JOB_ANNOTATION]: target.jobId,
          [HOLDER_ANNOTATION]: identity,
        },
      },
      spec: {
        holderIdentity: identity,
        leaseDurationSeconds,
        acquireTime: now,
        renewTime: now,
      },
    };
    const existing = await gateway.readLease(namespace, name);
    if (existing && !isExpired(existing, now.getTime())) {
      throw new ConflictError(busy(describeHolder(existing)));
    }
    if (target.dryRun) {
      // A dry run checks that the lock is free but does not hold it.
      if (!existing) await gateway.createLease(namespace, desired, true);
      return {
        name,
        namespace,
        renew: async () => {},
        confirm: async () => {},
        isFresh: () => true,
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
          busy(winner ? describeHolder(winner) : 'another process'),
        );
      }
      throw e;
    }

    const trustedForMs = (leaseDurationSeconds * 1000 * 2) / 3;
    const isFresh = () => this.monotonicNow() - renewedAt < trustedForMs;
    const renewed = (lease: V1Lease, renewTime: Date) =>
      gateway.replaceLease(namespace, {
        ...lease,
        spec: { ...lease.spec, renewTime },
      });
    const renewOnce = async () => {
      const sentAt = this.monotonicNow();
      const renewTime = await clock.currentTime();
      try {
        held = await renewed(held, renewTime);
      } catch (e) {
        if (
          !(
            e instanceof ClusterRequestError &&
            (e.statusCode === 409 || e.statusCode === 404)
          )
        )
          throw e;
        // Re-read: the Lease says who holds it now.
        const current = await gateway.readLease(namespace, name);
        if (!current)
          throw new LeaseLostError(`the lease ${label} was deleted`);
        if (
          current.spec?.holderIdentity !== identity ||
          current.metadata?.uid !== held.metadata?.uid
        )
          throw new LeaseLostError(
            `the lease ${label} is now held by ${describeHolder(current)}`,
          );
        // An earlier renewal of ours went through though its answer was lost.
        held = await renewed(current, renewTime);
      }
      renewedAt = sentAt;
    };
    let renewing: Promise<void> | undefined;
    const renew = () =>
      (renewing ??= renewOnce().finally(() => {
        renewing = undefined;
      }));
    return {
      name,
      namespace,
      renew,
      isFresh,
      confirm: async () => {
        if (isFresh()) return;
        try {
          await renew();
        } catch (e) {
          if (e instanceof LeaseLostError) throw e;
          throw new LeaseLostError(
            `the lease ${label} could not be renewed within its duration (${
              (e as Error).message
            })`,
          );
        }
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
