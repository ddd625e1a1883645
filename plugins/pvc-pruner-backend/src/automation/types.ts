import type {
  AutoPruneRun,
  ClaimKeep,
  PruneJob,
  PruneRequest,
} from 'backstage-plugin-pvc-pruner-common';
import type { WorkloadEntity } from '../ownership';

/**
 * The keeps made through the card, and the fence that makes a keep and an
 * automatic delete of the same claim exclusive: the job marks the claim as
 * being deleted, then reads its keep; the keep is stored, then looks for
 * the mark. Each writes before it reads, so one of them always sees the
 * other: a keep that was acknowledged is never deleted automatically.
 */
export interface ClaimKeeps {
  /** The card keeps in force (no end, or an end still ahead by the database's clock), by claim uid: of a claim kept through several entities, the keep that lasts longest. */
  keepsOf(
    cluster: string,
    uids: readonly string[],
  ): Promise<Map<string, ClaimKeep>>;
  /** Marks the claim as being deleted by an automatic job; from now on a keep of it is refused (409). */
  markDeleting(cluster: string, uid: string, jobId: string): Promise<void>;
  /** The claim's card keep in force right now, read after `markDeleting`. */
  keptNow(cluster: string, uid: string): Promise<ClaimKeep | undefined>;
  /** Lifts the job's mark when it did not delete the claim after all, so that it can be kept again. */
  unmarkDeleting(cluster: string, uid: string, jobId: string): Promise<void>;
}

/** When automatic runs happen, for the card and the fleet page. */
export interface AutoPruneSchedule {
  lastRun(): Promise<AutoPruneRun | undefined>;
  /** When the next run is due, when known. */
  nextRunAt(): Promise<string | undefined>;
}

/** One orphan an automatic run plans for. */
export interface PlannedClaim {
  name: string;
  uid: string;
  ordinal: number;
  /** Its capacity (or request), what a limit counts. */
  bytes: number;
  /** First sighting as an orphan plus the grace; no earlier than its first announcement plus `notifyBefore`. */
  eligibleAt: string;
  /** First announced to its owners by this run: its before-notice must go out, even if one went out for the same StatefulSet and day. */
  newlyAnnounced?: boolean;
  storageClassName?: string;
  monthlyCost?: number;
  /** Its volume outlives the claim (Retain). */
  retained: boolean;
}

/** One automated StatefulSet's orphans, as an automatic run sees them. */
export interface PlannedGroup {
  cluster: string;
  namespace: string;
  statefulSet: string;
  /** The entity the prune goes through (`onBehalfOf`): a claimant that selects it by kubernetes-id. */
  through: WorkloadEntity;
  /** Every claimant (all opted in), by ref, sorted: the notices' recipients. */
  claimants: string[];
  graceMs: number;
  /** Past their grace and not kept: pruned by this run (within the limits). */
  eligible: PlannedClaim[];
  /** Not yet eligible, but within `notifyBefore`: their owners are told. */
  upcoming: PlannedClaim[];
  /** Kept (card or annotation), with why. */
  kept: Array<{ name: string; uid: string; keep: ClaimKeep }>;
}

/** What an automatic run found, before it prunes anything. */
export interface AutoPrunePlan {
  /** Orphans of automated StatefulSets judged. */
  considered: number;
  groups: PlannedGroup[];
  /** Clusters whose caches could not answer: nothing there is pruned this run. */
  clustersFailed: Array<{ cluster: string; error: string }>;
  /** StatefulSets past the plan's cap (the oldest eligible are planned first), left for later runs. */
  groupsLeftOut?: number;
}

/** Plans an automatic run from the warm catalog and the watch caches. */
export interface AutoPrunePlanning {
  plan(): Promise<AutoPrunePlan>;
}

/** Starts automatic prune jobs (and dry runs): the plugin's own principal, on behalf of an entity. */
export interface AutomaticPrunes {
  start(options: {
    request: PruneRequest;
    onBehalfOf: WorkloadEntity;
    runId: string;
  }): Promise<PruneJob>;
}
