import type { V1PersistentVolume } from '@kubernetes/client-node';
import { formatBytes, PruneJob } from 'backstage-plugin-pvc-pruner-common';
import type { KubeGateway } from '../kubernetes';
import type {
  BeforeDeleteStep,
  BeforeDeleteStepFactory,
  Confirmed,
  JobEvents,
  JobRequest,
  Prepared,
} from '../jobs';
import { mapLimited } from '../mapLimited';
import type { SnapshotOptions } from '../options';
import type { SnapshotSeal } from './SnapshotSeal';
import {
  SnapshotClassResolver,
  UNBOUND_NO_SNAPSHOT,
} from './SnapshotClassResolver';
import {
  SnapshotOrder,
  SnapshotResult,
  SnapshotTaker,
  stopReason,
} from './SnapshotTaker';

/** Snapshots taken (and waited for) at once within a job. */
const SNAPSHOT_CONCURRENCY = 16;

type SnapshotEventType =
  | 'snapshot-creating'
  | 'snapshot-ready'
  | 'snapshot-failed'
  | 'snapshot-skipped';

/** One job's snapshots. */
class JobSnapshots implements BeforeDeleteStep {
  readonly batchSize = SNAPSHOT_CONCURRENCY;

  constructor(
    private readonly job: PruneJob,
    private readonly gateway: KubeGateway,
    private readonly request: JobRequest,
    private readonly resolver: SnapshotClassResolver,
    private readonly taker: SnapshotTaker,
    private readonly events: JobEvents,
    private readonly required: boolean,
  ) {}

  prepare(
    claims: readonly Confirmed[],
    stop: AbortSignal,
  ): Promise<Prepared[]> {
    return mapLimited(claims, SNAPSHOT_CONCURRENCY, async confirmed => {
      try {
        return await this.snapshot(confirmed, stop);
      } catch (e) {
        const reason = `its snapshot could not be taken: ${
          (e as Error).message
        }`;
        await this.log(
          'snapshot-failed',
          confirmed,
          `Not deleting ${confirmed.name}: ${reason}`,
        );
        return { kind: 'held', confirmed, reason };
      }
    });
  }

  private async snapshot(
    confirmed: Confirmed,
    stop: AbortSignal,
  ): Promise<Prepared> {
    const { job, gateway } = this;
    const held = async (
      reason: string,
      taken?: SnapshotResult,
    ): Promise<Prepared> => {
      await this.log(
        'snapshot-failed',
        confirmed,
        `Not deleting ${confirmed.name}: ${reason}${
          taken ? ` (VolumeSnapshot ${taken.name} is left in place)` : ''
        }`,
      );
      // A snapshot left in the cluster is named, so that it can be found and cleaned up.
      return {
        kind: 'held',
        confirmed,
        reason,
        ...(taken ? { outcome: { snapshot: describe(taken) } } : {}),
      };
    };
    if (stop.aborted)
      return held(`${stopReason(stop)} before its snapshot was taken`);
    const claim = await gateway.readClaim(job.namespace, confirmed.name);
    // Gone, recreated or already being deleted: the last check skips it, saying which.
    if (
      !claim ||
      claim.metadata?.uid !== confirmed.uid ||
      claim.metadata?.deletionTimestamp
    )
      return { kind: 'ready', confirmed };
    const volumeName = claim.spec?.volumeName;
    if (!volumeName) return this.without(confirmed, UNBOUND_NO_SNAPSHOT);
    const volume: V1PersistentVolume | undefined = await gateway.readVolume(
      volumeName,
    );
    const choice = await this.resolver.resolve(claim, volume);
    if (choice.kind === 'not-needed')
      return this.without(confirmed, choice.reason);
    if (choice.kind === 'error')
      return held(`no snapshot could be taken: ${choice.reason}`);
    if (choice.kind === 'none') {
      if (this.required)
        return held(
          `it has no VolumeSnapshotClass, and pvcPruner.snapshots.required is true: ${choice.reason}`,
        );
      return this.without(
        confirmed,
        `it has no VolumeSnapshotClass (pvcPruner.snapshots.required is false): ${choice.reason}`,
      );
    }
    await this.log(
      'snapshot-creating',
      confirmed,
      `${job.dryRun ? 'Dry run: creating' : 'Creating'} a VolumeSnapshot of ${
        confirmed.name
      } (class ${choice.name})${
        job.dryRun ? '' : '; it is deleted only once the snapshot is ready'
      }`,
    );
    const order: SnapshotOrder = {
      jobId: job.id,
      namespace: job.namespace,
      dryRun: job.dryRun,
      claim,
      volume,
      className: choice.name,
      driver: choice.driver,
      statefulSet: job.statefulSet,
      entityRef: this.request.target?.entityRef ?? job.entityRef,
      requestedBy: job.requestedBy,
    };
    const result = await this.taker.take(gateway, order, stop);
    if (!result.ok)
      return held(
        `its snapshot failed: ${result.reason}`,
        result.uid ? result : undefined,
      );
    const size =
      result.restoreBytes !== undefined
        ? `, restore size ${formatBytes(result.restoreBytes)}`
        : '';
    await this.log(
      'snapshot-ready',
      confirmed,
      job.dryRun
        ? `Dry run: VolumeSnapshot ${result.name} of ${confirmed.name} would be created, kept until ${result.expiresAt}`
        : `VolumeSnapshot ${result.name} of ${confirmed.name} is ready${size}; kept until ${result.expiresAt}`,
    );
    return {
      kind: 'ready',
      confirmed,
      outcome: { snapshot: describe(result) },
      // A dry run's snapshot was only admitted: there is nothing to read again.
      ...(job.dryRun
        ? {}
        : {
            lastCheck: () => this.taker.recheck(gateway, order, result),
          }),
    };
  }

  /** Let through without a snapshot, saying why in the log and the outcome. */
  private async without(confirmed: Confirmed, why: string): Promise<Prepared> {
    await this.log(
      'snapshot-skipped',
      confirmed,
      `No snapshot of ${confirmed.name}: ${why}`,
    );
    return { kind: 'ready', confirmed, outcome: { noSnapshot: why } };
  }

  private async log(
    type: SnapshotEventType,
    confirmed: Confirmed,
    message: string,
  ) {
    await this.events.append({
      jobId: this.job.id,
      type,
      pvc: confirmed.name,
      message,
    });
  }
}

/** A snapshot as a claim's outcome names it. */
function describe(result: SnapshotResult) {
  return {
    name: result.name,
    expiresAt: result.expiresAt,
    ...(result.uid ? { uid: result.uid } : {}),
    ...(result.contentName ? { contentName: result.contentName } : {}),
    ...(result.ok && result.restoreBytes !== undefined
      ? { restoreBytes: result.restoreBytes }
      : {}),
  };
}

/**
 * The snapshot step of a prune job that asked for snapshots
 * (`snapshot: true`): before each claim's last check and delete, its
 * VolumeSnapshot is taken and waited for. A claim whose snapshot fails or
 * times out, or that has no VolumeSnapshotClass while
 * `pvcPruner.snapshots.required` is true, is held back (not deleted). A
 * Retain volume needs none; with `required: false`, a claim without a class
 * is deleted without one; the outcome says so. Each snapshot is named in the
 * job's events and in the claim's outcome.
 */
export class SnapshotSteps implements BeforeDeleteStepFactory {
  private readonly taker: SnapshotTaker;

  constructor(
    private readonly deps: {
      events: JobEvents;
      options: SnapshotOptions;
      seal: SnapshotSeal;
      /** Replaces the taker (tests: shorter polls). */
      taker?: SnapshotTaker;
    },
  ) {
    this.taker =
      deps.taker ??
      new SnapshotTaker({
        timeoutMs: deps.options.timeoutMs,
        retentionDays: deps.options.retentionDays,
        seal: deps.seal,
      });
  }

  start(options: {
    job: PruneJob;
    gateway: KubeGateway;
    request?: JobRequest;
  }): BeforeDeleteStep | undefined {
    if (!options.request?.snapshot) return undefined;
    return new JobSnapshots(
      options.job,
      options.gateway,
      options.request,
      new SnapshotClassResolver(
        options.gateway,
        this.deps.options.classByStorageClass,
      ),
      this.taker,
      this.deps.events,
      this.deps.options.required,
    );
  }
}
