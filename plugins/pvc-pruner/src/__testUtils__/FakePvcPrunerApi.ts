import {
  KeepClaimRequest,
  KeepSnapshotRequest,
  PruneEvent,
  PruneJob,
  PruneRequest,
  ReclaimRequest,
  RestoreRequest,
} from 'backstage-plugin-pvc-pruner-common';
import {
  FleetRequest,
  GetOrphansOptions,
  PvcPrunerApi,
  UnkeepClaimRequest,
  UnownedOrphansRequest,
} from '../api/PvcPrunerApi';

type Listener = {
  after: number;
  onEvent: (e: PruneEvent) => void;
  done: () => void;
};

/**
 * An in-memory PvcPrunerApi for component tests. Events are fed with
 * `emit`; streams replay what was emitted, then follow live. Its methods
 * take their types from PvcPrunerApi, so the fake cannot drift from it.
 */
export class FakePvcPrunerApi implements PvcPrunerApi {
  /** Answers getOrphans; by default never. */
  orphans: PvcPrunerApi['getOrphans'] = () => new Promise(() => {});
  /** Answers getFleet, with its filters defaulted; by default never. */
  fleet: (request: FleetRequest) => ReturnType<PvcPrunerApi['getFleet']> = () =>
    new Promise(() => {});
  readonly fleetRequests: FleetRequest[] = [];
  /** Answers getUnownedOrphans; by default never. */
  unownedOrphans: PvcPrunerApi['getUnownedOrphans'] = () =>
    new Promise(() => {});
  readonly unownedRequests: UnownedOrphansRequest[] = [];
  /** The options of each getOrphans call. */
  readonly orphansOptions: Array<GetOrphansOptions | undefined> = [];
  /** Answers listSnapshots; by default an answer with none. */
  snapshots: PvcPrunerApi['listSnapshots'] = async entityRef => ({
    entityRef,
    clusters: [],
    totals: { snapshots: 0, bytes: 0 },
  });
  /** Answers restoreSnapshot; by default never. */
  restore: PvcPrunerApi['restoreSnapshot'] = () => new Promise(() => {});
  readonly restores: RestoreRequest[] = [];
  /** Answers keepSnapshot; by default never. */
  keep: PvcPrunerApi['keepSnapshot'] = () => new Promise(() => {});
  readonly keeps: KeepSnapshotRequest[] = [];
  /** Answers keepClaim; by default the card keep the request asks for, by user:default/guest. */
  keepClaimAnswer: PvcPrunerApi['keepClaim'] = async request => ({
    source: 'card',
    reason: request.reason,
    ...(request.until ? { until: request.until } : {}),
    keptBy: 'user:default/guest',
    keptAt: new Date().toISOString(),
  });
  readonly claimKeeps: KeepClaimRequest[] = [];
  /** Answers unkeepClaim; by default it succeeds. */
  unkeepClaimAnswer: PvcPrunerApi['unkeepClaim'] = async () => {};
  readonly claimUnkeeps: UnkeepClaimRequest[] = [];
  /** Answers listReleasedVolumes; by default none. */
  releasedVolumes: PvcPrunerApi['listReleasedVolumes'] = async () => ({
    items: [],
    truncated: false,
    totals: { volumes: 0, bytes: 0 },
    errors: [],
  });
  readonly reclaims: ReclaimRequest[] = [];
  jobs: PruneJob[] = [];
  nextJobId = 'job-1';
  startError?: Error;
  readonly started: PruneRequest[] = [];
  readonly streamed: Array<{ jobId: string; after: number }> = [];
  private readonly events = new Map<string, PruneEvent[]>();
  private readonly listeners = new Map<string, Set<Listener>>();

  getOrphans: PvcPrunerApi['getOrphans'] = async (entityRef, options) => {
    this.orphansOptions.push(options);
    return this.orphans(entityRef, options);
  };

  /** Answers getLeftBehind; by default nothing left behind. */
  leftBehind: PvcPrunerApi['getLeftBehind'] = async entityRef => ({
    entityRef,
    clusters: [],
  });

  getLeftBehind: PvcPrunerApi['getLeftBehind'] = (entityRef, options) =>
    this.leftBehind(entityRef, options);

  getFleet: PvcPrunerApi['getFleet'] = async (request = {}) => {
    this.fleetRequests.push(request);
    return this.fleet(request);
  };

  listSnapshots: PvcPrunerApi['listSnapshots'] = async (entityRef, options) =>
    this.snapshots(entityRef, options);

  restoreSnapshot: PvcPrunerApi['restoreSnapshot'] = async request => {
    this.restores.push(request);
    return this.restore(request);
  };

  keepSnapshot: PvcPrunerApi['keepSnapshot'] = async request => {
    this.keeps.push(request);
    return this.keep(request);
  };

  keepClaim: PvcPrunerApi['keepClaim'] = async request => {
    this.claimKeeps.push(request);
    return this.keepClaimAnswer(request);
  };

  unkeepClaim: PvcPrunerApi['unkeepClaim'] = async request => {
    this.claimUnkeeps.push(request);
    return this.unkeepClaimAnswer(request);
  };

  getUnownedOrphans: PvcPrunerApi['getUnownedOrphans'] = async request => {
    this.unownedRequests.push(request);
    return this.unownedOrphans(request);
  };

  startPrune: PvcPrunerApi['startPrune'] = async request => {
    if (this.startError) throw this.startError;
    this.started.push(request);
    return { id: this.nextJobId };
  };

  listReleasedVolumes: PvcPrunerApi['listReleasedVolumes'] = async entityRef =>
    this.releasedVolumes(entityRef);

  startReclaim: PvcPrunerApi['startReclaim'] = async request => {
    if (this.startError) throw this.startError;
    this.reclaims.push(request);
    return { id: this.nextJobId };
  };

  getJob: PvcPrunerApi['getJob'] = async jobId => {
    const job = this.jobs.find(j => j.id === jobId);
    if (!job) throw new Error(`no job ${jobId}`);
    return job;
  };

  listJobs: PvcPrunerApi['listJobs'] = async request => {
    const limit = request.limit ?? 20;
    const start = request.cursor ? Number(request.cursor) : 0;
    const items = this.jobs.slice(start, start + limit);
    const more = start + limit < this.jobs.length;
    return { items, ...(more ? { nextCursor: String(start + limit) } : {}) };
  };

  streamJobEvents: PvcPrunerApi['streamJobEvents'] = (
    jobId,
    after,
    onEvent,
    signal,
  ) => {
    this.streamed.push({ jobId, after });
    return new Promise(resolve => {
      const listener: Listener = { after, onEvent, done: resolve };
      const set = this.listeners.get(jobId) ?? new Set();
      this.listeners.set(jobId, set);
      signal?.addEventListener('abort', () => {
        set.delete(listener);
        resolve();
      });
      for (const event of this.events.get(jobId) ?? []) {
        if (event.seq > after) onEvent(event);
        if (event.type === 'job-finished') {
          resolve();
          return;
        }
      }
      set.add(listener);
    });
  };

  /** Appends an event to its job's log and hands it to the open streams. */
  emit(...events: PruneEvent[]) {
    for (const event of events) {
      const log = this.events.get(event.jobId) ?? [];
      log.push(event);
      this.events.set(event.jobId, log);
      for (const listener of [...(this.listeners.get(event.jobId) ?? [])]) {
        listener.onEvent(event);
        if (event.type === 'job-finished') {
          this.listeners.get(event.jobId)?.delete(listener);
          listener.done();
        }
      }
    }
  }
}
