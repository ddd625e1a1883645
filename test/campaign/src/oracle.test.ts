import type {
  ClaimDeletion,
  KubeObject,
  LeaseWrite,
  ReclaimPolicyChange,
  RecordedRequest,
  SnapshotRecord,
  StatefulSetState,
} from 'kube-sim';
import type { PruneEvent, PruneJob } from 'backstage-plugin-pvc-pruner-common';
import {
  CardKeepRecord,
  emptyAutoPruneRecords,
  KeepAnnotationRecord,
} from './autoPrunePhase';
import { judge } from './oracle';
import { CatalogEntity, demoPolicy } from './ownership';
import { JobRecord, ScenarioRun } from './runScenario';
import { generateScenario, USER_ENTITY } from './scenario';

const NS = 'campaign-test';
const USER = 'system:serviceaccount:backstage:replica-0';
const JOB = 'job-1';
const T = 1_800_000_000_000;

let seq = 0;
function request(fields: Partial<RecordedRequest>): RecordedRequest {
  return {
    seq: ++seq,
    at: T,
    injectedLatencyMs: 0,
    user: USER,
    verb: 'get',
    resource: 'persistentvolumeclaims',
    namespace: NS,
    dryRun: false,
    status: 200,
    ...fields,
  };
}

const GUEST_REFS = ['user:default/guest', 'group:default/checkout'];

/** A catalog entity of the demo's kind: a Component in namespace default. */
function entity(
  name: string,
  owner: string,
  annotations: Record<string, string>,
  visibleAt = 0,
): CatalogEntity {
  return {
    ref: `component:default/${name}`,
    owner,
    annotations,
    visibleAt,
  };
}

/** The demo's orders Component: the user's team's, claiming every StatefulSet labelled orders. */
const ORDERS = entity('orders', 'group:default/checkout', {
  'backstage.io/kubernetes-id': 'orders',
});

/** StatefulSet web as the delete met it: the user's team's, running ordinals 0–2. */
function web(change: Partial<StatefulSetState> = {}): StatefulSetState {
  return {
    name: 'web',
    uid: 'uid-web',
    start: 0,
    replicas: 3,
    templates: ['data'],
    deleting: false,
    labels: { 'backstage.io/kubernetes-id': 'orders', app: 'web' },
    labelsSince: 0,
    ...change,
  };
}

function lease(renewedAt: number, job = JOB): KubeObject {
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: {
      name: 'pvc-pruner-web',
      namespace: NS,
      uid: 'lease-uid',
      resourceVersion: '1',
      creationTimestamp: '',
      annotations: {
        'pvc-pruner.backstage.io/job-id': job,
        'pvc-pruner.backstage.io/holder-identity': `backstage/${job}`,
      },
    },
    spec: {
      holderIdentity: `backstage/${job}`,
      leaseDurationSeconds: 3,
      renewTime: new Date(renewedAt).toISOString(),
    },
  };
}

function log(...types: Array<[PruneEvent['type'], string?]>): PruneEvent[] {
  return types.map(([type, pvc], i) => ({
    jobId: JOB,
    seq: i + 1,
    type,
    pvc,
    at: '',
    message: '',
    ...(type === 'job-finished' ? { status: 'succeeded' as const } : {}),
    ...(type === 'pvc-deleted'
      ? { outcome: { name: pvc!, uid: 'uid-3' } }
      : {}),
  }));
}

/** A scenario in which job-1 on replica 0 deletes data-web-3 (uid-3), which it was asked to; change one thing per test. */
function scenarioRun(
  change: {
    deletion?: Partial<ClaimDeletion>;
    confirmedUid?: string;
    leaseRenewedAt?: number;
    events?: PruneEvent[];
    finalClaims?: KubeObject[];
    extraRequests?: RecordedRequest[];
    catalog?: CatalogEntity[];
    via?: string;
    /** The campaign asked this job for snapshots. */
    snapshot?: boolean;
    snapshotEvents?: SnapshotRecord[];
  } = {},
): ScenarioRun {
  seq = 0;
  const leaseWrite: LeaseWrite = {
    request: request({
      verb: 'create',
      resource: 'leases',
      name: 'pvc-pruner-web',
      at: T - 500,
      status: 201,
    }),
    after: lease(change.leaseRenewedAt ?? T - 500),
  };
  const claimRead = request({ name: 'data-web-3', at: T - 20 });
  const podList = request({ verb: 'list', resource: 'pods', at: T - 10 });
  const extra = change.extraRequests ?? [];
  const deleteRequest = request({ verb: 'delete', name: 'data-web-3', at: T });
  const deletion: ClaimDeletion = {
    request: deleteRequest,
    claim: {
      uid: 'uid-3',
      resourceVersion: '7',
      terminating: false,
      finalizers: [],
    },
    pods: [],
    statefulSets: [web()],
    runningOrdinalOf: [],
    autoscaledOrdinalOf: [],
    inUse: false,
    ...change.deletion,
  };
  const events =
    change.events ??
    log(
      ['job-started'],
      ['pvc-deleting', 'data-web-3'],
      ['pvc-deleted', 'data-web-3'],
      ['job-finished'],
    );
  const job: JobRecord = {
    id: JOB,
    replica: 0,
    sentAt: T - 1000,
    statefulSet: 'web',
    via: change.via ?? USER_ENTITY,
    dryRun: false,
    snapshot: change.snapshot ?? false,
    leftBehind: false,
    confirmed: [{ name: 'data-web-3', uid: change.confirmedUid ?? 'uid-3' }],
    final: {
      id: JOB,
      status: 'succeeded',
      createdAt: new Date(T - 1000).toISOString(),
      finishedAt: new Date(T + 100).toISOString(),
    } as PruneJob,
    endedAt: T + 200,
    eventsByReplica: new Map([
      [0, events],
      [1, events],
    ]),
    replicaKilled: false,
  };
  const audit = [
    {
      replica: 0,
      eventId: 'prune',
      plugin: 'pvc-pruner',
      status: 'initiated' as const,
      meta: { namespace: NS, statefulSet: 'web' },
    },
    {
      replica: 0,
      eventId: 'prune',
      plugin: 'pvc-pruner',
      status: 'succeeded' as const,
      meta: { namespace: NS, statefulSet: 'web', jobId: JOB },
    },
  ];
  const requests = [
    leaseWrite.request,
    claimRead,
    podList,
    ...extra,
    deleteRequest,
  ];
  requests.forEach((r, i) => {
    r.seq = i + 1;
  });
  return {
    scenario: {
      ...generateScenario(1, { replicas: 2, leaseDurationSeconds: 3 }),
      namespace: NS,
    },
    requests,
    deletions: [deletion],
    leaseWrites: [leaseWrite],
    snapshotEvents: change.snapshotEvents ?? [],
    policyChanges: [],
    volumeDeletions: [],
    reclaims: [],
    sent: [
      {
        plan: {
          atMs: 0,
          statefulSet: 'web',
          via: job.via,
          replica: 0,
          share: 1,
          extras: [],
          dryRun: false,
          snapshot: job.snapshot,
        },
        replica: 0,
        sentAt: T - 1000,
        confirmed: job.confirmed,
        outcome: { kind: 'accepted', jobId: JOB, status: 202 },
      },
    ],
    jobs: [job],
    finalClaims: change.finalClaims ?? [],
    audit,
    replicaOfUser: new Map([
      [USER, 0],
      ['system:serviceaccount:backstage:replica-1', 1],
    ]),
    catalog: change.catalog ?? [ORDERS],
    ownershipRefs: GUEST_REFS,
    pausedStatefulSets: 'keep',
    faults: {},
    harnessErrors: [],
    catalogSyncsMs: [],
    freezes: [],
    autoPruneRecords: emptyAutoPruneRecords(),
    durationMs: 1000,
  };
}

/** The plugin's live read of StatefulSet web, served at `at`. */
const stsRead = (at: number) =>
  request({ resource: 'statefulsets', name: 'web', at });

const invariants = (run: ScenarioRun) =>
  judge(run).violations.map(v => v.invariant);

describe('the oracle', () => {
  it('passes a confirmed, checked, leased deletion that the log reports', () => {
    const judgement = judge(scenarioRun());
    expect(judgement.violations).toEqual([]);
    expect(judgement.deletions).toBe(1);
    expect(judgement.windowsMs).toEqual([10]);
  });

  it('flags a claim deleted while a pod mounted it before the delete was sent', () => {
    const run = scenarioRun({
      deletion: {
        inUse: true,
        inUseSince: T - 50,
        pods: [
          { name: 'intruder-0', uid: 'p', terminating: false, since: T - 50 },
        ],
      },
    });
    expect(invariants(run)).toEqual(['in-use-claim-deleted']);
  });

  it('flags a claim whose ordinal its StatefulSet ran when the last check read the StatefulSet', () => {
    const run = scenarioRun({
      deletion: {
        inUse: true,
        inUseSince: T - 50,
        runningOrdinalOf: [{ statefulSet: 'web', ordinal: 3, since: T - 50 }],
      },
      extraRequests: [stsRead(T - 10)],
    });
    expect(invariants(run)).toEqual(['in-use-claim-deleted']);
  });

  it('flags a claim of a running ordinal when the last check did not read the StatefulSet (an earlier read does not count)', () => {
    const run = scenarioRun({
      deletion: {
        inUse: true,
        inUseSince: T - 5,
        runningOrdinalOf: [{ statefulSet: 'web', ordinal: 3, since: T - 5 }],
      },
    });
    run.requests.unshift(stsRead(T - 900));
    run.requests.forEach((r, i) => {
      r.seq = i + 1;
    });
    expect(invariants(run)).toEqual(['in-use-claim-deleted']);
  });

  it('counts, without flagging, a claim whose StatefulSet began to run its ordinal after the last check read it', () => {
    const run = scenarioRun({
      deletion: {
        inUse: true,
        inUseSince: T - 5,
        runningOrdinalOf: [{ statefulSet: 'web', ordinal: 3, since: T - 5 }],
      },
      extraRequests: [stsRead(T - 10)],
    });
    const judgement = judge(run);
    expect(judgement.violations).toEqual([]);
    expect(judgement.inUseAfterLastCheck).toBe(1);
  });

  it('counts, without flagging, a claim that a pod mounted after the last pod list was served', () => {
    const run = scenarioRun({
      deletion: {
        inUse: true,
        inUseSince: T - 5,
        pods: [
          { name: 'intruder-0', uid: 'p', terminating: false, since: T - 5 },
        ],
      },
    });
    const judgement = judge(run);
    expect(judgement.violations).toEqual([]);
    expect(judgement.inUseAfterLastCheck).toBe(1);
  });

  it('counts, without flagging, a claim that became in use while its delete was on the wire', () => {
    const run = scenarioRun({ deletion: { inUse: true, inUseSince: T - 5 } });
    run.deletions[0].request.injectedLatencyMs = 8;
    const judgement = judge(run);
    expect(judgement.violations).toEqual([]);
    expect(judgement.inUseDuringFlight).toBe(1);
  });

  it("attributes a deletion to the job whose StatefulSet names the claim, not to a sibling's job that carelessly confirmed it too", () => {
    const run = scenarioRun({
      deletion: {
        statefulSets: ['cache', 'web'].map(name =>
          web({
            name,
            uid: `uid-${name}`,
            replicas: 1,
            labels: { 'backstage.io/kubernetes-id': 'orders', app: name },
          }),
        ),
      },
    });
    const careless = {
      ...run.jobs[0],
      id: 'job-careless',
      statefulSet: 'cache',
      eventsByReplica: new Map(
        [0, 1].map(r => [r, log(['job-started'], ['job-finished'])]),
      ),
    };
    run.jobs.unshift(careless);
    const cacheLease = {
      request: request({
        verb: 'create',
        resource: 'leases',
        name: 'pvc-pruner-cache',
        at: T - 600,
        status: 201,
      }),
      after: lease(T - 500, careless.id),
    };
    run.leaseWrites.unshift(cacheLease);
    run.requests.unshift(cacheLease.request);
    run.requests.forEach((r, i) => {
      r.seq = i + 1;
    });
    run.audit.push({
      ...run.audit[1],
      meta: { namespace: NS, statefulSet: 'cache', jobId: careless.id },
    });
    expect(judge(run).violations).toEqual([]);
  });

  it('flags a deletion of a uid the user did not confirm (a re-created claim)', () => {
    expect(invariants(scenarioRun({ confirmedUid: 'uid-old' }))).toContain(
      'unconfirmed-claim-deleted',
    );
  });

  it('judges a delete the simulator took in while its replica was stopped as sent before the stop, and says when a flagged one was sent', () => {
    const lateRead = scenarioRun({ leaseRenewedAt: T - 4000 });
    lateRead.freezes = [{ replica: 0, from: T - 2500, to: T + 2000 }];
    expect(judge(lateRead).violations).toEqual([]);

    const afterWaking = scenarioRun({ leaseRenewedAt: T - 4000 });
    afterWaking.freezes = [{ replica: 0, from: T - 3500, to: T - 500 }];
    expect(judge(afterWaking).violations).toEqual([
      {
        invariant: 'delete-without-holding-the-lease',
        detail:
          'data-web-3: job job-1 deleted it 1000 ms after its Lease had expired; sent 500 ms after its replica was resumed from SIGSTOP',
      },
    ]);
  });

  it('flags a deletion sent after the job’s Lease had expired (a replica that woke from SIGSTOP)', () => {
    expect(invariants(scenarioRun({ leaseRenewedAt: T - 4000 }))).toEqual([
      'delete-without-holding-the-lease',
    ]);
  });

  it('flags a second round trip between the last live check and the delete: a read of its volume', () => {
    const volumeRead = request({
      verb: 'get',
      resource: 'persistentvolumes',
      namespace: undefined,
      name: 'pv-3',
      at: T - 5,
    });
    const run = scenarioRun({ extraRequests: [volumeRead] });
    run.deletions[0].claim!.volumeName = 'pv-3';
    expect(invariants(run)).toEqual([
      'check-to-delete-window-over-one-round-trip',
    ]);
  });

  it('measures the round trip on the spot: one slow round trip on a busy machine is still one', () => {
    const run = scenarioRun();
    run.requests[1].at = T - 300;
    run.requests[2].at = T - 150;
    const judgement = judge(run);
    expect(judgement.violations).toEqual([]);
    expect(judgement.roundTripsMs).toEqual([150]);
  });

  it('flags a log that calls a claim deleted while it is still there, held by a finalizer', () => {
    const still = {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: {
        name: 'data-web-3',
        uid: 'uid-3',
        deletionTimestamp: 'now',
        finalizers: ['acc.example/backup-hold'],
      },
    } as unknown as KubeObject;
    expect(invariants(scenarioRun({ finalClaims: [still] }))).toEqual([
      'event-log-disagrees-with-cluster',
    ]);
  });

  it('flags a log with a gap, a log without its end, and a deletion the log does not mention', () => {
    const gap = log(
      ['job-started'],
      ['pvc-deleted', 'data-web-3'],
      ['job-finished'],
    );
    gap[2].seq = 4;
    expect(invariants(scenarioRun({ events: gap }))).toEqual([
      'event-log-not-whole',
    ]);
    expect(
      invariants(
        scenarioRun({
          events: log(['job-started'], ['pvc-deleted', 'data-web-3']),
        }),
      ),
    ).toEqual(['event-log-not-whole']);
    expect(
      invariants(
        scenarioRun({ events: log(['job-started'], ['job-finished']) }),
      ),
    ).toEqual(['event-log-disagrees-with-cluster']);
  });

  it('flags a Lease taken over before it expired', () => {
    const run = scenarioRun();
    run.leaseWrites.push({
      request: {
        ...request({
          verb: 'update',
          resource: 'leases',
          name: 'pvc-pruner-web',
          at: T + 10,
        }),
        seq: 100,
      },
      before: lease(T - 500),
      after: lease(T + 10, 'job-2'),
    });
    expect(invariants(run)).toEqual(['lease-taken-while-held']);
  });

  describe('paused StatefulSets', () => {
    const paused = (since: number) =>
      scenarioRun({
        deletion: { statefulSets: [web({ replicas: 0, pausedSince: since })] },
        extraRequests: [stsRead(T - 10)],
      });

    it('flags a claim of a StatefulSet that was at 0 replicas when the last check read it', () => {
      expect(invariants(paused(T - 500))).toEqual(['paused-claim-deleted']);
    });

    it('flags it when the last check did not read the StatefulSet at all', () => {
      const run = scenarioRun({
        deletion: { statefulSets: [web({ replicas: 0, pausedSince: T - 5 })] },
      });
      expect(invariants(run)).toEqual(['paused-claim-deleted']);
    });

    it('counts, without flagging, a pause that began after the last check read the StatefulSet', () => {
      const judgement = judge(paused(T - 5));
      expect(judgement.violations).toEqual([]);
      expect(judgement.keptAfterLastCheck).toEqual({ paused: 1 });
    });

    it('passes a paused claim deleted with pausedStatefulSets: offer, and a claim of a running StatefulSet', () => {
      const offered = paused(T - 500);
      offered.pausedStatefulSets = 'offer';
      expect(judge(offered).violations).toEqual([]);
      expect(
        judge(scenarioRun({ extraRequests: [stsRead(T - 10)] })).violations,
      ).toEqual([]);
    });
  });

  describe('autoscalers', () => {
    const hpaList = (at: number) =>
      request({ verb: 'list', resource: 'horizontalpodautoscalers', at });
    const covered = (since: number, listedAt?: number) =>
      scenarioRun({
        deletion: {
          autoscaledOrdinalOf: [
            {
              statefulSet: 'web',
              ordinal: 3,
              autoscaler: 'web',
              maxReplicas: 6,
              since,
            },
          ],
        },
        extraRequests: listedAt === undefined ? [] : [hpaList(listedAt)],
      });

    it("flags a claim inside an HPA's range when the last check listed the HPAs", () => {
      expect(invariants(covered(T - 500, T - 10))).toEqual([
        'claim-in-autoscaler-range-deleted',
      ]);
    });

    it('flags it when the last check did not list the HPAs at all', () => {
      expect(invariants(covered(T - 5))).toEqual([
        'claim-in-autoscaler-range-deleted',
      ]);
    });

    it('counts, without flagging, an HPA created or raised after the last check listed them', () => {
      const judgement = judge(covered(T - 5, T - 10));
      expect(judgement.violations).toEqual([]);
      expect(judgement.keptAfterLastCheck).toEqual({ 'autoscaler range': 1 });
    });

    it('passes a claim no HPA covers', () => {
      expect(
        judge(scenarioRun({ extraRequests: [hpaList(T - 10)] })).violations,
      ).toEqual([]);
    });
  });

  describe('claimants', () => {
    const theirs = (annotations: Record<string, string>, visibleAt = 0) =>
      entity('catch-all', 'group:default/search', annotations, visibleAt);
    const catchAll = {
      'backstage.io/kubernetes-label-selector': '!nonexistent',
    };

    it("flags a deletion while another team's catch-all claimed the StatefulSet", () => {
      const run = scenarioRun({ catalog: [ORDERS, theirs(catchAll)] });
      const { violations } = judge(run);
      expect(violations.map(v => v.invariant)).toEqual([
        'deleted-without-prune-permission-on-every-claimant',
      ]);
      expect(violations[0].detail).toContain(
        'component:default/catch-all (owned by group:default/search)',
      );
    });

    it("flags a deletion while another team's entity borrowed the StatefulSet's kubernetes-id, in its namespace", () => {
      const borrowed = theirs({
        'backstage.io/kubernetes-id': 'orders',
        'backstage.io/kubernetes-namespace': NS,
      });
      expect(invariants(scenarioRun({ catalog: [ORDERS, borrowed] }))).toEqual([
        'deleted-without-prune-permission-on-every-claimant',
      ]);
    });

    it("flags a deletion through the user's own entity of another team's StatefulSet", () => {
      const search = entity('search-index', 'group:default/search', {
        'backstage.io/kubernetes-id': 'search-index',
      });
      const mine = entity('mine', 'user:default/guest', catchAll);
      const run = scenarioRun({
        catalog: [ORDERS, search, mine],
        via: mine.ref,
        deletion: {
          statefulSets: [
            web({
              labels: {
                'backstage.io/kubernetes-id': 'search-index',
                app: 'web',
              },
            }),
          ],
        },
      });
      expect(invariants(run)).toEqual([
        'deleted-without-prune-permission-on-every-claimant',
      ]);
    });

    it('flags a deletion through an entity the user may not prune', () => {
      const search = entity('search-index', 'group:default/search', {
        'backstage.io/kubernetes-id': 'orders',
      });
      expect(
        invariants(scenarioRun({ catalog: [search], via: search.ref })),
      ).toEqual(['deleted-without-prune-permission-on-every-claimant']);
    });

    it("passes the user's own catch-all beside their team's entity, another team's catch-all scoped elsewhere, and an unreadable selector of the user's", () => {
      const run = scenarioRun({
        catalog: [
          ORDERS,
          entity('mine', 'group:default/checkout', catchAll),
          entity('odd', 'user:default/guest', {
            'backstage.io/kubernetes-label-selector': 'app in (',
          }),
          theirs({
            ...catchAll,
            'backstage.io/kubernetes-namespace': 'elsewhere',
          }),
          theirs({
            ...catchAll,
            'backstage.io/kubernetes-cluster': 'warehouse',
          }),
        ],
      });
      expect(judge(run).violations).toEqual([]);
    });

    it("takes an unreadable selector of another team's as claiming everything", () => {
      const run = scenarioRun({
        catalog: [
          ORDERS,
          theirs({ 'backstage.io/kubernetes-label-selector': 'app in (' }),
        ],
      });
      expect(invariants(run)).toEqual([
        'deleted-without-prune-permission-on-every-claimant',
      ]);
    });

    it('judges by the catalog the job read when it started: an entity every replica served only after the prune was sent does not count', () => {
      const late = scenarioRun({
        catalog: [ORDERS, theirs(catchAll, T - 900)],
      });
      expect(judge(late).violations).toEqual([]);
      const early = scenarioRun({
        catalog: [ORDERS, theirs(catchAll, T - 1001)],
      });
      expect(invariants(early)).toEqual([
        'deleted-without-prune-permission-on-every-claimant',
      ]);
    });

    it("counts, without flagging, labels that made another team's entity a claimant after the last check read the StatefulSet", () => {
      const search = entity('search-index', 'group:default/search', {
        'backstage.io/kubernetes-id': 'search-index',
      });
      const relabelled = (since: number) =>
        scenarioRun({
          catalog: [ORDERS, search],
          extraRequests: [stsRead(T - 10)],
          deletion: {
            statefulSets: [
              web({
                labels: {
                  'backstage.io/kubernetes-id': 'search-index',
                  app: 'web',
                },
                labelsSince: since,
              }),
            ],
          },
        });
      const judgement = judge(relabelled(T - 5));
      expect(judgement.violations).toEqual([]);
      expect(judgement.keptAfterLastCheck).toEqual({ claimants: 1 });
      expect(invariants(relabelled(T - 500))).toEqual([
        'deleted-without-prune-permission-on-every-claimant',
      ]);
    });

    it('flags a StatefulSet only selectors claim when the policy denies pvc-pruner.unowned.prune, and passes it under the demo policy', () => {
      const mine = entity('mine', 'user:default/guest', catchAll);
      const run = scenarioRun({
        catalog: [ORDERS, mine],
        via: mine.ref,
        deletion: { statefulSets: [web({ labels: { app: 'web' } })] },
      });
      expect(judge(run).violations).toEqual([]);
      const strict = { ...demoPolicy(GUEST_REFS), unownedPrune: false };
      expect(judge(run, strict).violations.map(v => v.invariant)).toEqual([
        'deleted-without-prune-permission-on-every-claimant',
      ]);
      // orders vouches for it by the plain kubernetes-id.
      expect(
        judge(scenarioRun({ catalog: [ORDERS, mine] }), strict).violations,
      ).toEqual([]);
    });

    it('counts the prunes refused for a claimant the user may not prune', () => {
      const run = scenarioRun({
        catalog: [ORDERS, theirs(catchAll, T - 5000)],
      });
      run.deletions = [];
      run.jobs[0].final!.reason =
        'the ownership check when the job started refused it: StatefulSet campaign-test/web in cluster "demo" is also claimed by component:default/catch-all: …';
      run.sent.push({
        ...run.sent[0],
        outcome: {
          kind: 'refused',
          status: 403,
          message:
            'StatefulSet … is also claimed by component:default/catch-all',
        },
      });
      expect(judge(run).refusedForClaimant).toEqual({ atRequest: 1, byJob: 1 });
    });
  });

  describe('the batched re-check: every claim read, then one pod list, then the deletes', () => {
    const claimRead = (name: string, at: number) => request({ name, at });
    const volumeRead = (name: string, at: number) =>
      request({
        resource: 'persistentvolumes',
        namespace: undefined,
        name,
        at,
      });

    it('passes two claims read, with their volumes, before one pod list that vouches for both, and measures the round trip from the last read', () => {
      const run = scenarioRun();
      // Before the helper's own claim read and pod list (at T-20, T-10): data-web-4 and both volumes.
      const [leaseCreate, ownRead, podList, ...rest] = run.requests;
      run.requests = [
        leaseCreate,
        ownRead,
        claimRead('data-web-4', T - 19),
        volumeRead('pv-3', T - 15),
        volumeRead('pv-4', T - 14),
        podList,
        ...rest,
      ];
      run.requests.forEach((r, i) => {
        r.seq = i + 1;
      });
      run.deletions[0].claim!.volumeName = 'pv-3';
      const judgement = judge(run);
      expect(judgement.violations).toEqual([]);
      expect(judgement.roundTripsMs).toEqual([4]);
    });

    it('flags a claim whose last read came after the pod list: no pod list vouches for it', () => {
      const run = scenarioRun({
        extraRequests: [claimRead('data-web-3', T - 5)],
      });
      expect(invariants(run)).toEqual(['delete-without-live-check']);
    });
  });

  it("names a Lease's holder by its holderIdentity, not by annotations written for an earlier holder", () => {
    const run = scenarioRun();
    const taken = lease(T + 10);
    taken.spec.holderIdentity = 'other-tool/job-2';
    run.leaseWrites.push({
      request: {
        ...request({
          verb: 'update',
          resource: 'leases',
          name: 'pvc-pruner-web',
          at: T + 10,
        }),
        seq: 100,
      },
      before: lease(T - 500),
      after: taken,
    });
    expect(invariants(run)).toEqual(['lease-taken-while-held']);
  });

  it('flags a job without its closing audit event', () => {
    const run = scenarioRun();
    run.audit.pop();
    expect(invariants(run)).toEqual(['prune-without-audit-event']);
  });
});

describe('the oracle on a prune that asked for snapshots (deleted-without-ready-snapshot)', () => {
  /** One VolumeSnapshot's record: of data-web-3 (uid-3) unless told, at T minus `ago` ms. */
  const snap = (
    event: SnapshotRecord['event'],
    ago: number,
    of: { name?: string; claim?: string; claimUid?: string } = {},
  ): SnapshotRecord => ({
    at: T - ago,
    event,
    namespace: NS,
    name: of.name ?? 'data-web-3-job1',
    uid: `uid-${of.name ?? 'data-web-3-job1'}`,
    sourceClaim: of.claim ?? 'data-web-3',
    ...(event === 'ready'
      ? {
          sourceClaimUid: of.claimUid ?? 'uid-3',
          content: `snapcontent-${of.name ?? 'data-web-3-job1'}`,
        }
      : {}),
  });
  const deleteVolume = {
    volume: { name: 'pvc-uid-3', reclaimPolicy: 'Delete', claimUid: 'uid-3' },
  };
  const snapshotRun = (
    snapshotEvents: SnapshotRecord[],
    deletion: Partial<ClaimDeletion> = deleteVolume,
  ) => scenarioRun({ snapshot: true, snapshotEvents, deletion });

  it('passes a deletion that met a ready snapshot of its claim, and counts it', () => {
    const judgement = judge(
      snapshotRun([snap('created', 300), snap('ready', 100)]),
    );
    expect(judgement.violations).toEqual([]);
    expect(judgement.snapshots).toEqual({
      jobs: 1,
      deletionsJudged: 1,
      retainExempt: 0,
      keptBecause: {},
    });
  });

  it('flags a deletion without any snapshot', () => {
    expect(invariants(snapshotRun([]))).toEqual([
      'deleted-without-ready-snapshot',
    ]);
  });

  it('flags a deletion whose snapshot was created but not ready yet', () => {
    expect(invariants(snapshotRun([snap('created', 300)]))).toEqual([
      'deleted-without-ready-snapshot',
    ]);
  });

  it('flags a deletion whose snapshot became ready only after the delete arrived', () => {
    expect(
      invariants(snapshotRun([snap('created', 300), snap('ready', -5)])),
    ).toEqual(['deleted-without-ready-snapshot']);
  });

  it('flags a deletion whose ready snapshot was deleted (or marked for deletion) before the delete arrived', () => {
    for (const gone of ['deleting', 'deleted', 'unready'] as const)
      expect(
        invariants(
          snapshotRun([
            snap('created', 300),
            snap('ready', 100),
            snap(gone, 50),
          ]),
        ),
      ).toEqual(['deleted-without-ready-snapshot']);
  });

  it('flags a deletion whose snapshot failed', () => {
    expect(
      invariants(snapshotRun([snap('created', 300), snap('error', 200)])),
    ).toEqual(['deleted-without-ready-snapshot']);
  });

  it("flags a deletion that met only a ready snapshot of another claim's uid (the claim re-created under its name) or of another claim", () => {
    expect(
      invariants(
        snapshotRun([
          snap('created', 300),
          snap('ready', 100, { claimUid: 'uid-old' }),
        ]),
      ),
    ).toEqual(['deleted-without-ready-snapshot']);
    expect(
      invariants(
        snapshotRun([
          snap('created', 300, { name: 'wal-web-3-job1', claim: 'wal-web-3' }),
          snap('ready', 100, { name: 'wal-web-3-job1', claim: 'wal-web-3' }),
        ]),
      ),
    ).toEqual(['deleted-without-ready-snapshot']);
  });

  it('stays quiet on a job that did not ask for snapshots, and on a Retain volume bound to the claim', () => {
    expect(
      judge(scenarioRun({ snapshot: false, deletion: deleteVolume }))
        .violations,
    ).toEqual([]);
    const retain = judge(
      snapshotRun([], {
        volume: {
          name: 'pvc-uid-3',
          reclaimPolicy: 'Retain',
          claimUid: 'uid-3',
        },
      }),
    );
    expect(retain.violations).toEqual([]);
    expect(retain.snapshots.retainExempt).toBe(1);
    // A Retain volume bound to another claim keeps nothing of this one.
    expect(
      invariants(
        snapshotRun([], {
          volume: {
            name: 'pvc-uid-3',
            reclaimPolicy: 'Retain',
            claimUid: 'uid-other',
          },
        }),
      ),
    ).toEqual(['deleted-without-ready-snapshot']);
  });

  it('counts the confirmed claims a snapshot kept, by what the simulator recorded of it', () => {
    const keptClaim = {
      metadata: { name: 'data-web-3', uid: 'uid-3' },
    } as KubeObject;
    const kept = (snapshotEvents: SnapshotRecord[]) => {
      const run = scenarioRun({
        snapshot: true,
        snapshotEvents,
        finalClaims: [keptClaim],
        events: log(['job-started'], ['job-finished']),
      });
      run.deletions = [];
      return judge(run).snapshots.keptBecause;
    };
    expect(kept([snap('created', 300), snap('error', 200)])).toEqual({
      'snapshot failed': 1,
    });
    expect(kept([snap('created', 300)])).toEqual({
      'snapshot not ready in time': 1,
    });
    expect(kept([snap('created', 300), snap('deleting', 200)])).toEqual({
      'snapshot deleted by hand': 1,
    });
    expect(kept([])).toEqual({ 'no snapshot taken': 1 });
  });
});

describe('the oracle on a StatefulSet re-created under its name while a job runs (deleted-claim-a-new-statefulset-of-its-name-would-reattach)', () => {
  const INVARIANT =
    'deleted-claim-a-new-statefulset-of-its-name-would-reattach';
  /** web, deleted and created again (uid-web-2) `appeared` ms before the delete; job-1 was sent 1000 ms before it. */
  const recreated = (
    appearedAgo: number,
    change: Partial<StatefulSetState> = {},
    deletion: Partial<ClaimDeletion> = {},
    reads: RecordedRequest[] = [stsRead(T - 10)],
  ) =>
    scenarioRun({
      deletion: {
        statefulSets: [
          web({ uid: 'uid-web-2', existsSince: T - appearedAgo, ...change }),
        ],
        ...deletion,
      },
      extraRequests: reads,
    });
  /** …and it runs ordinal 3 (data-web-3) from `since` ms before the delete. */
  const running = (since: number): Partial<ClaimDeletion> => ({
    inUse: true,
    inUseSince: T - since,
    runningOrdinalOf: [{ statefulSet: 'web', ordinal: 3, since: T - since }],
  });

  it('flags a claim deleted after the re-created StatefulSet had appeared where the last check read it, though it ran the ordinal only from after that read', () => {
    const judgement = judge(recreated(500, { replicas: 4 }, running(5)));
    expect(judgement.violations.map(v => v.invariant)).toEqual([INVARIANT]);
    expect(judgement.violations[0].detail).toContain(
      'StatefulSet web (uid uid-web-2) had appeared 500 ms before',
    );
    // in-use-claim-deleted dates the ordinal, which began in the window: it only counts it.
    expect(judgement.inUseAfterLastCheck).toBe(1);
    expect(judgement.newStatefulSetJudged).toBe(1);
  });

  it('flags a claim of a re-created StatefulSet at 0 replicas (a scale-up brings it back), and one whose autoscaler may scale it up to the ordinal', () => {
    expect(
      invariants(recreated(500, { replicas: 0, pausedSince: T - 5 })),
    ).toEqual([INVARIANT]);
    expect(
      invariants(
        recreated(
          500,
          { replicas: 2 },
          {
            autoscaledOrdinalOf: [
              {
                statefulSet: 'web',
                ordinal: 3,
                autoscaler: 'web',
                maxReplicas: 5,
                since: T - 5,
              },
            ],
          },
          [
            stsRead(T - 10),
            request({
              verb: 'list',
              resource: 'horizontalpodautoscalers',
              at: T - 8,
            }),
          ],
        ),
      ),
    ).toEqual([INVARIANT]);
  });

  it('counts, without flagging, a StatefulSet that appeared after the last check read its name, also when that read found none (404)', () => {
    const late = judge(recreated(5, { replicas: 4 }, running(5)));
    expect(late.violations).toEqual([]);
    expect(late.keptAfterLastCheck).toEqual({
      'a new StatefulSet of its name': 1,
    });
    const absent = judge(
      recreated(5, { replicas: 4 }, running(5), [
        request({
          resource: 'statefulsets',
          name: 'web',
          status: 404,
          at: T - 10,
        }),
      ]),
    );
    expect(absent.violations).toEqual([]);
    expect(absent.inUseAfterLastCheck).toBe(1);
  });

  it('passes a re-created StatefulSet that would not reattach the claim (above its range: an orphan by today’s rule), and leaves the one the job was sent for to the other invariants', () => {
    const above = judge(recreated(500, { replicas: 2 }));
    expect(above.violations).toEqual([]);
    expect(above.newStatefulSetJudged).toBe(1);
    // The StatefulSet that existed when the prune was sent, scaled up in the window: in-use counts it.
    const same = judge(
      scenarioRun({
        deletion: {
          statefulSets: [web({ replicas: 4, existsSince: T - 5000 })],
          ...running(5),
        },
        extraRequests: [stsRead(T - 10)],
      }),
    );
    expect(same.violations).toEqual([]);
    expect(same.newStatefulSetJudged).toBe(0);
  });
});

describe('the oracle on volume reclaims (volume-reclaimed-while-bound, reclaim-without-audit-event)', () => {
  const VOLUME = 'pvc-uid-3';
  /** Replica 0 patched the volume's reclaim policy to Delete; change one thing per test. */
  const reclaim = (
    change: Partial<ReclaimPolicyChange> = {},
    audit: Partial<ScenarioRun['audit'][number]> | null = {},
  ) => {
    const run = scenarioRun();
    run.deletions = [];
    run.jobs[0].eventsByReplica = new Map(
      [0, 1].map(r => [r, log(['job-started'], ['job-finished'])]),
    );
    run.policyChanges = [
      {
        at: T,
        volume: VOLUME,
        volumeUid: 'uid-pv-3',
        request: request({
          verb: 'patch',
          resource: 'persistentvolumes',
          namespace: undefined,
          name: VOLUME,
          at: T,
        }),
        from: 'Retain',
        to: 'Delete',
        phase: 'Released',
        claimUid: 'uid-3',
        claimRef: { namespace: NS, name: 'data-web-3', uid: 'uid-3' },
        claimExists: false,
        ...change,
      },
    ];
    run.reclaims = [
      {
        replica: 0,
        sentAt: T - 500,
        dryRun: false,
        volumes: [
          {
            name: VOLUME,
            uid: 'uid-pv-3',
            resourceVersion: '9',
            claimUid: 'uid-3',
          },
        ],
        outcome: { kind: 'accepted', jobId: 'reclaim-1', status: 202 },
        id: 'reclaim-1',
        final: { id: 'reclaim-1', status: 'succeeded' } as PruneJob,
        endedAt: T + 300,
      },
    ];
    if (audit) {
      run.audit.push({
        replica: 0,
        eventId: 'volume-reclaim',
        plugin: 'pvc-pruner',
        status: 'initiated',
        meta: { namespace: NS, volumes: [VOLUME], dryRun: false },
        ...audit,
      });
      run.audit.push({
        replica: 0,
        eventId: 'volume-reclaim',
        plugin: 'pvc-pruner',
        status: 'succeeded',
        meta: { namespace: NS, volumes: [VOLUME], jobId: 'reclaim-1' },
      });
    }
    return run;
  };

  it('passes a reclaim of a Released volume whose claim is gone, audited, and counts it', () => {
    const judgement = judge(reclaim());
    expect(judgement.violations).toEqual([]);
    expect(judgement.reclaims).toEqual({ reclaims: 1, deletedAfter: 0 });
  });

  it('flags a reclaim of a Bound volume, and of one Available or Pending', () => {
    for (const phase of ['Bound', 'Available', 'Pending'])
      expect(invariants(reclaim({ phase }))).toEqual([
        'volume-reclaimed-while-bound',
      ]);
  });

  it('flags a reclaim while the claim its claimRef names exists (re-bound to another claim), and one released from no claim uid', () => {
    const rebound = judge(
      reclaim({
        claimUid: 'uid-new',
        claimRef: { namespace: NS, name: 'data-web-3', uid: 'uid-new' },
        claimExists: true,
      }),
    ).violations;
    expect(rebound.map(v => v.invariant)).toEqual([
      'volume-reclaimed-while-bound',
    ]);
    expect(rebound[0].detail).toContain(
      'claimRef campaign-test/data-web-3 uid uid-new',
    );
    expect(
      invariants(reclaim({ claimUid: undefined, claimRef: undefined })),
    ).toEqual(['volume-reclaimed-while-bound']);
  });

  it('flags a reclaim of a volume released from another claim uid than the one the user confirmed, and one no reclaim sent to that replica confirmed', () => {
    const other = judge(
      reclaim({
        claimUid: 'uid-other',
        claimRef: { namespace: NS, name: 'data-web-3', uid: 'uid-other' },
      }),
    ).violations;
    expect(other.map(v => v.invariant)).toEqual([
      'volume-reclaimed-while-bound',
    ]);
    expect(other[0].detail).toContain('(uid uid-3)');
    const unasked = reclaim();
    unasked.reclaims[0].replica = 1;
    expect(judge(unasked).violations.map(v => v.detail)).toContainEqual(
      expect.stringContaining('no reclaim sent to that replica confirmed it'),
    );
  });

  it('flags an answered reclaim request without its initiated audit event, a reclaim job without its closing one, and a reclaim job that did not end', () => {
    const unaudited = reclaim({}, null);
    unaudited.policyChanges = [];
    expect(invariants(unaudited)).toEqual([
      'reclaim-without-audit-event',
      'reclaim-without-audit-event',
    ]);
    const unclosed = reclaim();
    unclosed.audit.pop();
    expect(invariants(unclosed)).toEqual(['reclaim-without-audit-event']);
    const endless = reclaim();
    endless.reclaims[0].final = undefined;
    expect(invariants(endless)).toEqual(['job-did-not-end']);
  });

  it('does not judge a policy change that no replica made (the campaign by hand), a dry run, or a change back to Retain', () => {
    const byHand = reclaim({ phase: 'Bound', request: undefined });
    expect(judge(byHand).violations).toEqual([]);
    expect(judge(byHand).reclaims.reclaims).toBe(0);
    const dry = reclaim({ phase: 'Bound' });
    dry.policyChanges[0].request!.dryRun = true;
    expect(judge(dry).violations).toEqual([]);
    expect(
      judge(reclaim({ phase: 'Bound', from: 'Delete', to: 'Retain' }))
        .violations,
    ).toEqual([]);
  });

  it('flags a reclaim without its audit event on the replica that made it, naming the volume, not a dry run', () => {
    const flagged = (run: ScenarioRun) => [...new Set(invariants(run))];
    expect(flagged(reclaim({}, null))).toEqual(['reclaim-without-audit-event']);
    expect(flagged(reclaim({}, { replica: 1 }))).toEqual([
      'reclaim-without-audit-event',
    ]);
    // The request's and the job's events are there: only the volume's is missing.
    expect(
      invariants(
        reclaim(
          {},
          { meta: { namespace: NS, volumes: ['other'], dryRun: false } },
        ),
      ),
    ).toEqual(['reclaim-without-audit-event']);
    expect(
      invariants(
        reclaim(
          {},
          { meta: { namespace: NS, volumes: [VOLUME], dryRun: true } },
        ),
      ),
    ).toEqual(['reclaim-without-audit-event']);
  });

  it('counts the reclaimed volumes that their provisioner then deleted', () => {
    const run = reclaim();
    run.volumeDeletions = [
      {
        at: T + 100,
        name: VOLUME,
        uid: 'uid-pv-3',
        phase: 'Released',
        reclaimPolicy: 'Delete',
        finalizers: [],
        by: 'controller',
        policyChange: run.policyChanges[0],
      },
    ];
    expect(judge(run).reclaims).toEqual({ reclaims: 1, deletedAfter: 1 });
  });
});

describe('the oracle on automatic pruning (automatic-delete-of-entity-not-opted-in, automatic-delete-of-kept-claim)', () => {
  const AUTO_PRUNE = 'pvc-pruner.backstage.io/auto-prune';
  const KEEP = 'pvc-pruner.backstage.io/keep';
  /** orders, opted in with a 5 s grace: the only claimant of web. */
  const OPTED = entity('orders', 'group:default/checkout', {
    'backstage.io/kubernetes-id': 'orders',
    [AUTO_PRUNE]: '5s',
  });
  const keepRecord = (change: Partial<CardKeepRecord>): CardKeepRecord => ({
    kind: 'keep',
    claim: 'data-web-3',
    uid: 'uid-3',
    replica: 1,
    sentAt: T - 80,
    answeredAt: T - 50,
    status: 201,
    ...change,
  });
  /**
   * data-web-3 (uid-3) deleted by replica 0 with no prune of the campaign
   * confirming it, while an automatic job (auto-job) held web's Lease; its
   * volume Retain and bound to it (no snapshot needed). The last read of
   * the claim was served at T - 20.
   */
  function automaticRun(
    change: {
      catalog?: CatalogEntity[];
      annotations?: Record<string, string>;
      deletion?: Partial<ClaimDeletion>;
      cardKeeps?: CardKeepRecord[];
      keepAnnotations?: KeepAnnotationRecord[];
      extraRequests?: RecordedRequest[];
      snapshotEvents?: SnapshotRecord[];
      lease?: KubeObject;
      autoPrune?: boolean;
    } = {},
  ): ScenarioRun {
    const run = scenarioRun({
      catalog: change.catalog ?? [OPTED],
      extraRequests: change.extraRequests,
      snapshotEvents: change.snapshotEvents,
      deletion: {
        claim: {
          uid: 'uid-3',
          resourceVersion: '7',
          terminating: false,
          finalizers: [],
          annotations: change.annotations ?? {},
        },
        volume: { name: 'pv-3', reclaimPolicy: 'Retain', claimUid: 'uid-3' },
        ...change.deletion,
      },
    });
    run.jobs = [];
    run.sent = [];
    run.audit = [];
    run.leaseWrites[0].after = change.lease ?? lease(T - 500, 'auto-job');
    if (change.autoPrune !== false) run.autoPrune = { minimumGraceMs: 2000 };
    run.autoPruneRecords = {
      ...emptyAutoPruneRecords(),
      cardKeeps: change.cardKeeps ?? [],
      keepAnnotations: change.keepAnnotations ?? [],
    };
    return run;
  }

  it('passes an automatic deletion of an unkept claim of a StatefulSet whose every claimant opted in, and counts it', () => {
    const judgement = judge(automaticRun());
    expect(judgement.violations).toEqual([]);
    expect(judgement.autoPrune.deletions).toBe(1);
    expect(judgement.deletions).toBe(1);
  });

  it('flags it as unconfirmed when the replicas do not run automatic pruning', () => {
    expect(invariants(automaticRun({ autoPrune: false }))).toEqual([
      'unconfirmed-claim-deleted',
    ]);
  });

  it('flags a claim of a StatefulSet whose claimant had not opted in, or was its only claimant with an invalid opt-in, or had none', () => {
    const notOpted = judge(automaticRun({ catalog: [ORDERS] }));
    expect(notOpted.violations.map(v => v.invariant)).toEqual([
      'automatic-delete-of-entity-not-opted-in',
    ]);
    expect(notOpted.violations[0].detail).toContain(
      'claimed by component:default/orders, not opted in',
    );
    for (const value of ['1s', 'soon', '0s'])
      expect(
        invariants(
          automaticRun({
            catalog: [
              {
                ...OPTED,
                annotations: { ...OPTED.annotations, [AUTO_PRUNE]: value },
              },
            ],
          }),
        ),
      ).toEqual(['automatic-delete-of-entity-not-opted-in']);
    expect(judge(automaticRun({ catalog: [] })).violations[0].detail).toContain(
      'claimed by no catalog entity',
    );
  });

  it('flags a claim of an opted-in StatefulSet that a second entity, not opted in, also claims', () => {
    const second = entity('web-too', 'group:default/checkout', {
      'backstage.io/kubernetes-label-selector': 'app=web',
    });
    const judgement = judge(automaticRun({ catalog: [OPTED, second] }));
    expect(judgement.violations.map(v => v.invariant)).toEqual([
      'automatic-delete-of-entity-not-opted-in',
    ]);
    expect(judgement.violations[0].detail).toContain(
      'component:default/web-too',
    );
    // Opted in too: every claimant did.
    const both = {
      ...second,
      annotations: { ...second.annotations, [AUTO_PRUNE]: '3s' },
    };
    expect(invariants(automaticRun({ catalog: [OPTED, both] }))).toEqual([]);
  });

  it('judges the catalog by what may have been served: an entity being added counts for an opt-in, and against it only once every replica served it', () => {
    const arriving = entity(
      'web-too',
      'group:default/checkout',
      { 'backstage.io/kubernetes-label-selector': 'app=web' },
      T + 500,
    );
    arriving.writtenAt = T - 2000;
    expect(invariants(automaticRun({ catalog: [OPTED, arriving] }))).toEqual(
      [],
    );
    expect(
      invariants(
        automaticRun({ catalog: [OPTED, { ...arriving, visibleAt: T - 100 }] }),
      ),
    ).toEqual(['automatic-delete-of-entity-not-opted-in']);
    const optedArriving = { ...OPTED, visibleAt: T + 500, writtenAt: T - 2000 };
    expect(invariants(automaticRun({ catalog: [optedArriving] }))).toEqual([]);
    expect(
      invariants(
        automaticRun({ catalog: [{ ...optedArriving, writtenAt: T + 100 }] }),
      ),
    ).toEqual(['automatic-delete-of-entity-not-opted-in']);
  });

  it('flags a claim no StatefulSet named when the plugin last read it, and counts one whose StatefulSet went after that read', () => {
    expect(
      invariants(automaticRun({ deletion: { statefulSets: [] } })),
    ).toContain('automatic-delete-of-entity-not-opted-in');
    const gone = judge(
      automaticRun({
        deletion: { statefulSets: [] },
        extraRequests: [stsRead(T - 5)],
      }),
    );
    expect(gone.violations).toEqual([]);
    expect(gone.autoPrune.statefulSetGoneAfterLastRead).toBe(1);
    // A later read that found none (404) is the last read: it saw it gone.
    expect(
      invariants(
        automaticRun({
          deletion: { statefulSets: [] },
          extraRequests: [
            stsRead(T - 8),
            request({
              resource: 'statefulsets',
              name: 'web',
              at: T - 5,
              status: 404,
            }),
          ],
        }),
      ),
    ).toContain('automatic-delete-of-entity-not-opted-in');
  });

  it('flags a claim that carried the keep annotation at its delete, since before the last read of it; not one annotated false', () => {
    const kept = judge(
      automaticRun({
        annotations: { [KEEP]: 'yes' },
        keepAnnotations: [
          { claim: 'data-web-3', uid: 'uid-3', value: 'yes', at: T - 100 },
        ],
      }),
    );
    expect(kept.violations.map(v => v.invariant)).toEqual([
      'automatic-delete-of-kept-claim',
    ]);
    expect(kept.violations[0].detail).toContain(
      'pvc-pruner.backstage.io/keep="yes"',
    );
    // Written by someone else than the campaign: kept all the same.
    expect(
      invariants(automaticRun({ annotations: { [KEEP]: 'true' } })),
    ).toEqual(['automatic-delete-of-kept-claim']);
    for (const value of ['false', ' FALSE '])
      expect(
        invariants(automaticRun({ annotations: { [KEEP]: value } })),
      ).toEqual([]);
  });

  it('counts, without flagging, a keep annotation written after the last read of the claim (the check-to-delete window)', () => {
    const late = judge(
      automaticRun({
        annotations: { [KEEP]: 'true' },
        keepAnnotations: [
          { claim: 'data-web-3', uid: 'uid-3', value: 'true', at: T - 300 },
          { claim: 'data-web-3', uid: 'uid-3', at: T - 200 },
          { claim: 'data-web-3', uid: 'uid-3', value: 'true', at: T - 15 },
        ],
      }),
    );
    expect(late.violations).toEqual([]);
    expect(late.autoPrune.keptAfterLastRead).toBe(1);
  });

  it('flags a claim whose card keep was acknowledged before the delete was sent, and not removed nor ended', () => {
    const judgement = judge(automaticRun({ cardKeeps: [keepRecord({})] }));
    expect(judgement.violations.map(v => v.invariant)).toEqual([
      'automatic-delete-of-kept-claim',
    ]);
    expect(judgement.violations[0].detail).toContain("the card's keep of it");
    expect(
      invariants(
        automaticRun({ cardKeeps: [keepRecord({ until: T + 5000 })] }),
      ),
    ).toEqual(['automatic-delete-of-kept-claim']);
  });

  it('passes a card keep answered only after the delete was sent, refused, of another uid, ended, or undone', () => {
    for (const keeps of [
      [keepRecord({ answeredAt: T + 5 })],
      [keepRecord({ status: 409 })],
      [keepRecord({ status: undefined, answeredAt: undefined })],
      [keepRecord({ uid: 'uid-old' })],
      [keepRecord({ until: T + 500 })],
      [
        keepRecord({}),
        keepRecord({
          kind: 'unkeep',
          sentAt: T - 30,
          answeredAt: T - 25,
          status: 204,
        }),
      ],
      // An un-keep sent alongside the keep may have been served after it.
      [
        keepRecord({}),
        keepRecord({
          kind: 'unkeep',
          sentAt: T - 90,
          answeredAt: T - 40,
          status: 204,
        }),
      ],
      // A keep served after it replaced its end with a sooner one.
      [
        keepRecord({}),
        keepRecord({ sentAt: T - 60, answeredAt: T - 55, until: T + 200 }),
      ],
    ])
      expect(invariants(automaticRun({ cardKeeps: keeps }))).toEqual([]);
  });

  it("flags an automatic deletion while no job held its StatefulSet's Lease, or a job the campaign started, or one whose Lease had expired", () => {
    const other = lease(T - 500, 'auto-job');
    other.metadata.name = 'pvc-pruner-db';
    const manual = lease(T - 500, JOB);
    for (const held of [other, lease(T - 5000, 'auto-job')])
      expect(invariants(automaticRun({ lease: held }))).toEqual([
        'delete-without-holding-the-lease',
      ]);
    // A job of the campaign's (confirming another claim) holds it.
    const run = automaticRun({ lease: manual });
    run.jobs = [
      {
        ...scenarioRun().jobs[0],
        confirmed: [{ name: 'data-web-9', uid: 'uid-9' }],
      },
    ];
    expect(judge(run).violations.map(v => v.invariant)).toContain(
      'delete-without-holding-the-lease',
    );
  });

  it('flags an automatic deletion of a Delete volume without a ready snapshot (the replicas require them), and passes one with', () => {
    const deleteVolume: Partial<ClaimDeletion> = {
      volume: { name: 'pv-3', reclaimPolicy: 'Delete', claimUid: 'uid-3' },
    };
    expect(invariants(automaticRun({ deletion: deleteVolume }))).toEqual([
      'deleted-without-ready-snapshot',
    ]);
    const ready: SnapshotRecord = {
      at: T - 300,
      event: 'ready',
      namespace: NS,
      name: 'snap-3',
      uid: 'snap-uid',
      sourceClaim: 'data-web-3',
      sourceClaimUid: 'uid-3',
    };
    expect(
      invariants(
        automaticRun({ deletion: deleteVolume, snapshotEvents: [ready] }),
      ),
    ).toEqual([]);
  });

  const auto = entity('test-auto', 'group:default/checkout', {
    'backstage.io/kubernetes-id': 'test-auto',
    [AUTO_PRUNE]: '5s',
  });
  const catchAll = entity('everything', 'group:default/search', {
    'backstage.io/kubernetes-label-selector': '!nonexistent',
  });
  /** test-auto's StatefulSet store, with the orphans data-store-1 and -2; the window closed at T + 1000. */
  function storeRun(catalog: CatalogEntity[], awaited: string[] = []) {
    const run = automaticRun({ catalog });
    run.scenario = {
      ...run.scenario,
      statefulSets: [
        {
          name: 'store',
          team: 'auto',
          kubernetesId: 'test-auto',
          templates: ['data'],
          start: 0,
          replicas: 1,
          claimOrdinals: [0, 1, 2],
          podManagementPolicy: 'Parallel',
          retention: { whenScaled: 'Retain', whenDeleted: 'Retain' },
        },
      ],
      autoPrune: {
        entity: 'test-auto',
        kubernetesId: 'test-auto',
        annotation: '5s',
        statefulSets: ['store'],
        keeps: [],
        processFaults: [],
        windowMs: 9000,
        awaited,
      },
    };
    run.autoPruneRecords.windowClosedAt = T + 1000;
    return run;
  }

  it('counts the orphans of opted-in StatefulSets still there when the window closed: kept ones, and ones a claimant not opted in held back', () => {
    const claimObject = (
      name: string,
      annotations: Record<string, string> = {},
    ) =>
      ({
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: {
          name,
          namespace: NS,
          uid: `uid-${name}`,
          resourceVersion: '1',
          creationTimestamp: '',
          annotations,
        },
      } as KubeObject);
    const exposed = (catalog: CatalogEntity[]) => {
      const run = storeRun(catalog);
      run.finalClaims = [
        claimObject('data-store-0'),
        claimObject('data-store-1', { [KEEP]: 'true' }),
        claimObject('data-store-2'),
      ];
      return judge(run).autoPrune;
    };
    expect(exposed([OPTED, auto])).toMatchObject({
      keptExposed: 1,
      notOptedInExposed: 0,
    });
    expect(exposed([OPTED, auto, catchAll])).toMatchObject({
      keptExposed: 0,
      notOptedInExposed: 2,
    });
  });

  describe('an orphan nothing kept from automation (opted-in-orphan-never-pruned)', () => {
    it('flags it when no replica deleted it before the window closed', () => {
      const judgement = judge(storeRun([OPTED, auto], ['data-store-2']));
      expect(judgement.violations).toEqual([
        {
          invariant: 'opted-in-orphan-never-pruned',
          detail: expect.stringContaining(
            'data-store-2, an orphan of store whose every claimant had opted in, was never deleted',
          ),
        },
      ]);
      expect(judgement.autoPrune.awaited).toBe(1);
    });

    it('passes it once a replica deleted it, and counts it', () => {
      const run = storeRun([OPTED, auto], ['data-store-2']);
      run.deletions[0].request.name = 'data-store-2';
      const judgement = judge(run);
      expect(judgement.violations.map(v => v.invariant)).not.toContain(
        'opted-in-orphan-never-pruned',
      );
      expect(judgement.autoPrune.awaited).toBe(1);
    });

    it('does not judge it when a claimant, in the catalog as served, had not opted in, nor when the replicas ran no automatic pruning', () => {
      const heldBack = judge(
        storeRun([OPTED, auto, catchAll], ['data-store-2']),
      );
      expect(heldBack.violations.map(v => v.invariant)).not.toContain(
        'opted-in-orphan-never-pruned',
      );
      expect(heldBack.autoPrune.awaited).toBe(0);
      const run = storeRun([OPTED, auto], ['data-store-2']);
      run.autoPrune = undefined;
      run.deletions = [];
      expect(judge(run).violations).toEqual([]);
    });
  });
});
