import { setTimeout as sleep } from 'node:timers/promises';
import type {
  V1PersistentVolume,
  V1PersistentVolumeClaim,
} from '@kubernetes/client-node';
import { parseQuantity } from 'backstage-plugin-pvc-pruner-common';
import {
  ClusterRequestError,
  KubeGateway,
  VolumeSnapshot,
} from '../kubernetes';
import { snapshotMetadata, snapshotName } from './snapshotMetadata';

/** The cluster's calls a snapshot needs: the job's own gateway, with the user's credentials where it carries them. */
export type SnapshotCalls = Pick<
  KubeGateway,
  | 'createVolumeSnapshot'
  | 'readVolumeSnapshot'
  | 'readVolumeSnapshotContent'
  | 'readClaim'
>;

/** The finalizer the snapshot controller holds a claim with while a snapshot of it is taken. */
export const SOURCE_PROTECTION_FINALIZER =
  'snapshot.storage.kubernetes.io/pvc-as-source-protection';

/** The longest a ready snapshot's claim is waited for to be released by the snapshot controller. */
const RELEASE_WAIT_MS = 10_000;

/** One claim's snapshot, as a job asks for it. */
export interface SnapshotOrder {
  jobId: string;
  dryRun: boolean;
  claim: V1PersistentVolumeClaim;
  volume?: V1PersistentVolume;
  className: string;
  statefulSet: string;
  entityRef?: string;
  requestedBy: string;
}

/** A snapshot ready to restore from (for a dry run: admitted), or why there is none. */
export type SnapshotResult =
  | { ok: true; name: string; restoreBytes?: number; expiresAt: string }
  | { ok: false; name: string; reason: string };

export interface SnapshotTakerOptions {
  /** How long to wait for readyToUse (`pvcPruner.snapshots.timeoutSeconds`). */
  timeoutMs: number;
  retentionDays: number;
  /** The first wait between reads of a snapshot not ready yet; it doubles up to `maxPollMs`. */
  firstPollMs?: number;
  maxPollMs?: number;
}

const TIMEOUT_KEY = 'pvcPruner.snapshots.timeoutSeconds';

/**
 * Takes one claim's VolumeSnapshot, in its namespace, and waits until it is
 * readyToUse and bound to a VolumeSnapshotContent that points back at it
 * (namespace, name and uid) and, where both say, was taken of the claim's
 * volume. A `status.error`, a snapshot deleted or replaced while waited
 * for, or the timeout is a failure with the reason; the snapshot is then left
 * as it is. A dry run creates it with `dryRun=All` and does not wait.
 */
export class SnapshotTaker {
  private readonly firstPollMs: number;
  private readonly maxPollMs: number;

  constructor(private readonly options: SnapshotTakerOptions) {
    this.firstPollMs = options.firstPollMs ?? 250;
    this.maxPollMs = options.maxPollMs ?? 2000;
  }

  async take(
    calls: SnapshotCalls,
    order: SnapshotOrder,
    stop: AbortSignal,
  ): Promise<SnapshotResult> {
    const namespace = order.claim.metadata!.namespace!;
    const claimName = order.claim.metadata!.name!;
    const name = snapshotName(claimName, order.jobId);
    const expiresAt = new Date(
      Date.now() + this.options.retentionDays * 86_400_000,
    ).toISOString();
    const { labels, annotations } = snapshotMetadata({
      ...order,
      expiresAt: new Date(expiresAt),
    });
    let created: VolumeSnapshot;
    try {
      created = await calls.createVolumeSnapshot(
        namespace,
        {
          apiVersion: 'snapshot.storage.k8s.io/v1',
          kind: 'VolumeSnapshot',
          metadata: { name, namespace, labels, annotations },
          spec: {
            volumeSnapshotClassName: order.className,
            source: { persistentVolumeClaimName: claimName },
          },
        },
        order.dryRun,
      );
    } catch (e) {
      const exists =
        e instanceof ClusterRequestError && e.statusCode === 409
          ? ' (a VolumeSnapshot of that name already exists, and it is not this job’s)'
          : '';
      return {
        ok: false,
        name,
        reason: `could not create VolumeSnapshot ${name}: ${
          (e as Error).message
        }${exists}`,
      };
    }
    if (order.dryRun) return { ok: true, name, expiresAt };
    const uid = created.metadata?.uid;
    if (!uid)
      return {
        ok: false,
        name,
        reason: `the cluster answered the creation of VolumeSnapshot ${name} without a uid`,
      };
    return this.waitReady(
      calls,
      order,
      { namespace, name, uid },
      expiresAt,
      stop,
    );
  }

  private async waitReady(
    calls: SnapshotCalls,
    order: SnapshotOrder,
    ref: { namespace: string; name: string; uid: string },
    expiresAt: string,
    stop: AbortSignal,
  ): Promise<SnapshotResult> {
    const { name } = ref;
    const fail = (reason: string): SnapshotResult => ({
      ok: false,
      name,
      reason,
    });
    const deadline = Date.now() + this.options.timeoutMs;
    let pollMs = this.firstPollMs;
    let lastReadError: string | undefined;
    for (;;) {
      if (stop.aborted)
        return fail(
          `the Backstage instance shut down before VolumeSnapshot ${name} was ready`,
        );
      let snapshot: VolumeSnapshot | undefined;
      let read = false;
      try {
        snapshot = await calls.readVolumeSnapshot(ref.namespace, name);
        read = true;
      } catch (e) {
        // A refusal (a missing RBAC rule) will not pass: say so now, not after the timeout.
        if (e instanceof ClusterRequestError && e.statusCode === 403)
          return fail(
            `could not read VolumeSnapshot ${name}: ${e.message}; it is left in place`,
          );
        // A read lost on the way is asked again until the deadline.
        lastReadError = (e as Error).message;
      }
      if (read) {
        if (!snapshot || snapshot.metadata?.uid !== ref.uid)
          return fail(
            `VolumeSnapshot ${name} was ${
              snapshot ? 'replaced' : 'deleted'
            } before it was ready`,
          );
        const error = snapshot.status?.error;
        if (error)
          return fail(
            `VolumeSnapshot ${name} failed: ${
              error.message?.slice(0, 1000) ||
              'the snapshot controller reported an error without a message'
            }`,
          );
        if (snapshot.status?.readyToUse === true) {
          const verified = await this.verify(
            calls,
            order,
            ref,
            snapshot,
            expiresAt,
          );
          if (verified.ok) await this.awaitRelease(calls, order, stop);
          return verified;
        }
      }
      const left = deadline - Date.now();
      if (left <= 0)
        return fail(
          `VolumeSnapshot ${name} was not ready within ${
            this.options.timeoutMs / 1000
          } s (${TIMEOUT_KEY})${
            lastReadError && !read
              ? `; the last read failed: ${lastReadError}`
              : ''
          }; it is left in place`,
        );
      // Cut short when the instance shuts down; the loop then says so.
      await sleep(Math.min(pollMs, left), undefined, { signal: stop }).catch(
        () => undefined,
      );
      pollMs = Math.min(pollMs * 2, this.maxPollMs);
    }
  }

  /**
   * Once a snapshot is ready, the snapshot controller lifts its
   * source-protection finalizer from the claim: that update changes the
   * claim's resourceVersion, and would fail a delete checked before it
   * (409), so it is waited for, a while. Past that, the claim goes on as it
   * is: the finalizer only delays its deletion, and the job reports what
   * holds it.
   */
  private async awaitRelease(
    calls: SnapshotCalls,
    order: SnapshotOrder,
    stop: AbortSignal,
  ): Promise<void> {
    const { namespace, name, uid } = order.claim.metadata!;
    const deadline =
      Date.now() + Math.min(RELEASE_WAIT_MS, this.options.timeoutMs);
    let pollMs = this.firstPollMs;
    while (!stop.aborted) {
      const claim = await calls
        .readClaim(namespace!, name!)
        .catch(() => undefined);
      // Gone, replaced or unreadable: the last check says which.
      if (
        !claim ||
        claim.metadata?.uid !== uid ||
        !claim.metadata?.finalizers?.includes(SOURCE_PROTECTION_FINALIZER)
      )
        return;
      const left = deadline - Date.now();
      if (left <= 0) return;
      await sleep(Math.min(pollMs, left), undefined, { signal: stop }).catch(
        () => undefined,
      );
      pollMs = Math.min(pollMs * 2, this.maxPollMs);
    }
  }

  /** A ready snapshot is trusted only once its content names it back. */
  private async verify(
    calls: SnapshotCalls,
    order: SnapshotOrder,
    ref: { namespace: string; name: string; uid: string },
    snapshot: VolumeSnapshot,
    expiresAt: string,
  ): Promise<SnapshotResult> {
    const { name } = ref;
    const fail = (reason: string): SnapshotResult => ({
      ok: false,
      name,
      reason,
    });
    const source = snapshot.spec?.source?.persistentVolumeClaimName;
    if (source !== order.claim.metadata?.name)
      return fail(
        `VolumeSnapshot ${name} is ready, but its source is ${
          source ?? 'not a claim'
        }`,
      );
    const contentName = snapshot.status?.boundVolumeSnapshotContentName;
    if (!contentName)
      return fail(
        `VolumeSnapshot ${name} is ready, but names no VolumeSnapshotContent`,
      );
    let content;
    try {
      content = await calls.readVolumeSnapshotContent(contentName);
    } catch (e) {
      return fail(
        `could not read VolumeSnapshotContent ${contentName} of VolumeSnapshot ${name}: ${
          (e as Error).message
        }`,
      );
    }
    if (!content)
      return fail(
        `VolumeSnapshot ${name} names VolumeSnapshotContent ${contentName}, which does not exist`,
      );
    const back = content.spec?.volumeSnapshotRef;
    if (
      back?.namespace !== ref.namespace ||
      back?.name !== name ||
      back?.uid !== ref.uid
    )
      return fail(
        `VolumeSnapshotContent ${contentName} does not point back at VolumeSnapshot ${
          ref.namespace
        }/${name} (it names ${back?.namespace ?? '?'}/${
          back?.name ?? '?'
        }, uid ${back?.uid ?? '?'})`,
      );
    const takenOf = content.spec?.source?.volumeHandle;
    const volumeHandle = order.volume?.spec?.csi?.volumeHandle;
    if (takenOf && volumeHandle && takenOf !== volumeHandle)
      return fail(
        `VolumeSnapshotContent ${contentName} was taken of volume handle ${takenOf}, not of the claim's volume (${volumeHandle})`,
      );
    const restoreBytes =
      parseQuantity(snapshot.status?.restoreSize) ??
      parseQuantity(content.status?.restoreSize);
    return {
      ok: true,
      name,
      expiresAt,
      ...(restoreBytes !== undefined ? { restoreBytes } : {}),
    };
  }
}
