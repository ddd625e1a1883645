import { setTimeout as sleep } from 'node:timers/promises';
import type { SnapshotSeal } from './SnapshotSeal';
import type {
  V1PersistentVolume,
  V1PersistentVolumeClaim,
} from '@kubernetes/client-node';
import { parseQuantity } from 'backstage-plugin-pvc-pruner-common';
import {
  ClusterRequestError,
  KubeGateway,
  VolumeSnapshot,
  VolumeSnapshotContent,
} from '../kubernetes';
import { boundContentProblem } from './snapshotContent';
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

/**
 * The first wait between reads of a snapshot (and of its claim's finalizer):
 * a batch waits for its slowest snapshot, and one a driver cuts at once is
 * ready within tens of milliseconds, so a longer first wait was most of such
 * a job's time (README, the undo window's cost). Doubling up to
 * MAX_POLL_MS, a slow snapshot costs only a few more reads.
 */
const FIRST_POLL_MS = 25;
const MAX_POLL_MS = 2000;

/** One claim's snapshot, as a job asks for it. */
export interface SnapshotOrder {
  jobId: string;
  /** The job's namespace: the claim's, and the snapshot's. */
  namespace: string;
  dryRun: boolean;
  claim: V1PersistentVolumeClaim;
  volume?: V1PersistentVolume;
  className: string;
  /** The resolved class's CSI driver: the content must be of it. */
  driver?: string;
  statefulSet: string;
  entityRef?: string;
  requestedBy: string;
}

/** A snapshot ready to restore from (for a dry run: admitted), or why there is none. */
export type SnapshotResult =
  | ({ ok: true; restoreBytes?: number } & SnapshotRef)
  | ({ ok: false; reason: string } & SnapshotRef);

/** A snapshot a job took: its name, when it expires, and once created its uid and (once verified) its content. */
export interface SnapshotRef {
  name: string;
  expiresAt: string;
  uid?: string;
  contentName?: string;
}

/** What a snapshot and its content must say before its claim may be deleted. */
interface Expected {
  namespace: string;
  name: string;
  uid: string;
  claimName: string;
  volumeHandle?: string;
  className: string;
  driver?: string;
}

/** What the job was told when `stop` aborted: the instance shut down unless the signal says why. */
export function stopReason(stop: AbortSignal): string {
  const reason: unknown = stop.reason;
  return reason instanceof Error && reason.name !== 'AbortError'
    ? `the job stopped (${reason.message})`
    : 'the Backstage instance shut down';
}

export interface SnapshotTakerOptions {
  /** How long to wait for readyToUse (`pvcPruner.snapshots.timeoutSeconds`). */
  timeoutMs: number;
  retentionDays: number;
  /** The first wait between reads of a snapshot not ready yet; it doubles up to `maxPollMs`. */
  firstPollMs?: number;
  maxPollMs?: number;
  /** Seals each snapshot as pvc-pruner's. */
  seal: SnapshotSeal;
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
    this.firstPollMs = options.firstPollMs ?? FIRST_POLL_MS;
    this.maxPollMs = options.maxPollMs ?? MAX_POLL_MS;
  }

  /** A dry run's snapshot is never stored: its seal would only be shown to admission webhooks and audit logs. */
  private sealedUnlessDryRun(
    snapshot: VolumeSnapshot,
    dryRun: boolean | undefined,
  ): VolumeSnapshot {
    return dryRun ? snapshot : this.options.seal.sealed(snapshot);
  }

  async take(
    calls: SnapshotCalls,
    order: SnapshotOrder,
    stop: AbortSignal,
  ): Promise<SnapshotResult> {
    // The job's namespace, not the API server's word for where the claim is.
    const namespace = order.namespace;
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
        this.sealedUnlessDryRun(
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
        ),
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
        expiresAt,
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
        expiresAt,
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
      uid: ref.uid,
      expiresAt,
      reason,
    });
    const deadline = Date.now() + this.options.timeoutMs;
    let pollMs = this.firstPollMs;
    let lastReadError: string | undefined;
    for (;;) {
      if (stop.aborted)
        return fail(
          `${stopReason(stop)} before VolumeSnapshot ${name} was ready`,
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
          const expected = this.expected(order, ref);
          const verified = await this.verify(calls, expected, snapshot);
          if (!verified.ok) return fail(verified.reason);
          await this.awaitRelease(calls, order, stop);
          return {
            ok: true,
            name,
            uid: ref.uid,
            contentName: verified.contentName,
            expiresAt,
            ...(verified.restoreBytes !== undefined
              ? { restoreBytes: verified.restoreBytes }
              : {}),
          };
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

  private expected(
    order: SnapshotOrder,
    ref: { namespace: string; name: string; uid: string },
  ): Expected {
    return {
      ...ref,
      claimName: order.claim.metadata!.name!,
      volumeHandle: order.volume?.spec?.csi?.volumeHandle,
      className: order.className,
      driver: order.driver,
    };
  }

  /**
   * The last word on a snapshot right before its claim is deleted: the
   * snapshot and its content, read again at once (one round trip), must
   * still be the ones verified when it became ready. The reason not to
   * delete, or undefined.
   */
  async recheck(
    calls: SnapshotCalls,
    order: SnapshotOrder,
    taken: SnapshotRef,
  ): Promise<string | undefined> {
    const { name, uid, contentName } = taken;
    if (!uid || !contentName)
      return `VolumeSnapshot ${name} was never seen ready`;
    let snapshot: VolumeSnapshot | undefined;
    let content: VolumeSnapshotContent | undefined;
    try {
      [snapshot, content] = await Promise.all([
        calls.readVolumeSnapshot(order.namespace, name),
        calls.readVolumeSnapshotContent(contentName),
      ]);
    } catch (e) {
      return `VolumeSnapshot ${name} could not be read again before the delete: ${
        (e as Error).message
      }`;
    }
    const expected = this.expected(order, {
      namespace: order.namespace,
      name,
      uid,
    });
    const problem = this.problem(expected, snapshot, contentName, content);
    return problem && `${problem}, right before the delete`;
  }

  /** A ready snapshot is trusted only once its content names it back and was cut of the claim's volume. */
  private async verify(
    calls: SnapshotCalls,
    expected: Expected,
    snapshot: VolumeSnapshot,
  ): Promise<
    | { ok: true; contentName: string; restoreBytes?: number }
    | { ok: false; reason: string }
  > {
    const { name } = expected;
    const contentName = snapshot.status?.boundVolumeSnapshotContentName;
    if (!contentName)
      return {
        ok: false,
        reason: `VolumeSnapshot ${name} is ready, but names no VolumeSnapshotContent`,
      };
    let content: VolumeSnapshotContent | undefined;
    try {
      content = await calls.readVolumeSnapshotContent(contentName);
    } catch (e) {
      return {
        ok: false,
        reason: `could not read VolumeSnapshotContent ${contentName} of VolumeSnapshot ${name}: ${
          (e as Error).message
        }`,
      };
    }
    const problem = this.problem(expected, snapshot, contentName, content);
    if (problem) return { ok: false, reason: problem };
    const restoreBytes =
      parseQuantity(snapshot.status?.restoreSize) ??
      parseQuantity(content?.status?.restoreSize);
    return {
      ok: true,
      contentName,
      ...(restoreBytes !== undefined ? { restoreBytes } : {}),
    };
  }

  /** What is wrong with a snapshot and its content for a restore of the claim, or undefined. */
  private problem(
    expected: Expected,
    snapshot: VolumeSnapshot | undefined,
    contentName: string,
    content: VolumeSnapshotContent | undefined,
  ): string | undefined {
    const { name } = expected;
    if (!snapshot) return `VolumeSnapshot ${name} no longer exists`;
    if (snapshot.metadata?.uid !== expected.uid)
      return `VolumeSnapshot ${name} was replaced (its uid is no longer ${expected.uid})`;
    if (snapshot.metadata?.deletionTimestamp)
      return `VolumeSnapshot ${name} is being deleted`;
    if (snapshot.status?.readyToUse !== true)
      return `VolumeSnapshot ${name} is no longer readyToUse`;
    const source = snapshot.spec?.source?.persistentVolumeClaimName;
    if (source !== expected.claimName)
      return `VolumeSnapshot ${name} is ready, but its source is ${
        source ?? 'not a claim'
      }`;
    const bound = snapshot.status?.boundVolumeSnapshotContentName;
    if (bound !== contentName)
      return `VolumeSnapshot ${name} is bound to ${
        bound ?? 'no VolumeSnapshotContent'
      }, not ${contentName}`;
    const unbound = boundContentProblem(expected, contentName, content);
    if (unbound || !content) return unbound;
    if (content.spec?.source?.snapshotHandle)
      return `VolumeSnapshotContent ${contentName} was pre-provisioned (source.snapshotHandle), not taken of the claim's volume`;
    const takenOf = content.spec?.source?.volumeHandle;
    if (!expected.volumeHandle)
      return `the claim's volume names no CSI volume handle, so VolumeSnapshotContent ${contentName} cannot be shown to be taken of it`;
    if (takenOf !== expected.volumeHandle)
      return `VolumeSnapshotContent ${contentName} was taken of volume handle ${
        takenOf ?? '(none)'
      }, not of the claim's volume (${expected.volumeHandle})`;
    if (content.spec?.volumeSnapshotClassName !== expected.className)
      return `VolumeSnapshotContent ${contentName} is of VolumeSnapshotClass ${
        content.spec?.volumeSnapshotClassName ?? '(none)'
      }, not ${expected.className}`;
    if (expected.driver && content.spec?.driver !== expected.driver)
      return `VolumeSnapshotContent ${contentName} is of CSI driver ${
        content.spec?.driver ?? '(none)'
      }, not ${expected.driver}`;
    return undefined;
  }
}
