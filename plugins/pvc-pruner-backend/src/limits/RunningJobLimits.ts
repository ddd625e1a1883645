import { TooManyRequestsError } from './TooManyRequestsError';

/** Who asks for a job, and for which StatefulSet. */
export interface RunningJobScope {
  requestedBy: string;
  cluster: string;
  namespace: string;
  statefulSet: string;
}

/** Where the jobs are counted: the database, which every replica shares. */
export interface ActiveJobCounter {
  activeJobCounts(
    scope: RunningJobScope,
  ): Promise<{ byUser: number; byStatefulSet: number }>;
}

export interface RunningJobLimitsOptions {
  /** Queued or running jobs, dry runs included, of one user. */
  perUser: number;
  /** Queued or running jobs, dry runs included, of one StatefulSet. */
  perStatefulSet: number;
}

/**
 * Jobs of one StatefulSet at once. Not a setting: its prunes run one at a
 * time anyway (its Lease), so this bounds dry runs beside them, e.g. one
 * finishing as the prune starts and a colleague's.
 */
export const RUNNING_JOBS_PER_STATEFULSET = 3;

const jobs = (n: number) => `${n} prune ${n === 1 ? 'job' : 'jobs'}`;

/**
 * At most so many queued or running jobs (dry runs included) per user and
 * per StatefulSet, across replicas: they are counted in the database.
 *
 * `ensureRoom` is the cheap refusal, before anything is asked of the
 * cluster. `admit` stores the job and counts again with it included:
 * concurrent requests can all pass the first count, and each withdraws its
 * job if the second is over the limit. The last of them to count sees every
 * one stored before it, so no more than the limit ever stay (at worst, racing
 * requests all withdraw, and are told to wait).
 */
export class RunningJobLimits {
  constructor(
    private readonly counter: ActiveJobCounter,
    private readonly limits: RunningJobLimitsOptions,
  ) {}

  /** Throws TooManyRequestsError, naming the limit and how many run, when `scope` has no room for one more job. */
  async ensureRoom(scope: RunningJobScope): Promise<void> {
    await this.check(scope, 0);
  }

  /**
   * Stores a job with `store`, then, if the limits were reached meanwhile,
   * removes it with `withdraw` and throws as `ensureRoom` does.
   */
  async admit<T>(
    scope: RunningJobScope,
    store: () => Promise<T>,
    withdraw: (stored: T) => Promise<void>,
  ): Promise<T> {
    const stored = await store();
    try {
      await this.check(scope, 1);
    } catch (e) {
      await withdraw(stored);
      throw e;
    }
    return stored;
  }

  /** Refuses when, not counting `self` jobs already stored, `scope` is at a limit. */
  private async check(scope: RunningJobScope, self: number) {
    const counts = await this.counter.activeJobCounts(scope);
    const byUser = counts.byUser - self;
    const byStatefulSet = counts.byStatefulSet - self;
    const { perUser, perStatefulSet } = this.limits;
    if (byUser >= perUser)
      throw new TooManyRequestsError(
        `You have ${jobs(
          byUser,
        )} running, dry runs included (the limit is ${perUser}); wait for one to finish`,
      );
    if (byStatefulSet >= perStatefulSet)
      throw new TooManyRequestsError(
        `StatefulSet ${scope.namespace}/${scope.statefulSet} in cluster "${
          scope.cluster
        }" has ${jobs(
          byStatefulSet,
        )} running, dry runs included (the limit is ${perStatefulSet}); wait for one to finish`,
      );
  }
}
