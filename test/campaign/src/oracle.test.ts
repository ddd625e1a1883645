import type {
  ClaimDeletion,
  KubeObject,
  LeaseWrite,
  RecordedRequest,
} from 'kube-sim';
import type { PruneEvent, PruneJob } from 'backstage-plugin-pvc-pruner-common';
import { judge } from './oracle';
import { JobRecord, ScenarioRun } from './runScenario';
import { generateScenario } from './scenario';

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
      annotations: { 'pvc-pruner.backstage.io/job-id': job },
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
    statefulSets: [],
    runningOrdinalOf: [],
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
    dryRun: false,
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
    sent: [
      {
        plan: {
          atMs: 0,
          statefulSet: 'web',
          replica: 0,
          share: 1,
          extras: [],
          dryRun: false,
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
    faults: {},
    harnessErrors: [],
    freezes: [],
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
        statefulSets: ['cache', 'web'].map(name => ({
          name,
          uid: `uid-${name}`,
          start: 0,
          replicas: 1,
          templates: ['data'],
          deleting: false,
        })),
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

  it('flags a job without its closing audit event', () => {
    const run = scenarioRun();
    run.audit.pop();
    expect(invariants(run)).toEqual(['prune-without-audit-event']);
  });
});
