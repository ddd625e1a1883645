import { TEST_SEAL } from '../__testUtils__/testSeal';
import { mockServices } from '@backstage/backend-test-utils';
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import type { PruneJob } from 'backstage-plugin-pvc-pruner-common';
import {
  ClusterRequestError,
  type KubeGateway,
  type LocatedCluster,
} from '../kubernetes';
import type { VolumeSnapshot } from '../kubernetes/volumeSnapshotTypes';
import { recordingAuditor } from '../__testUtils__/recordingAuditor';
import { MANAGED_SNAPSHOTS, SnapshotExpiryTask } from './SnapshotExpiryTask';

const NOW = new Date('2026-12-20T12:00:00Z');
const DAY_MS = 86_400_000;
const JOB = '6f1c2a3b-1111-4222-8333-944455556666';

/** A snapshot of the job's, created `ageDays` before NOW. */
function snapshot(
  name: string,
  ageDays: number | undefined,
  more: { keepUntil?: string; namespace?: string; uid?: string } = {},
): VolumeSnapshot {
  return TEST_SEAL.sealed({
    metadata: {
      name,
      resourceVersion: `rv-${name}`,
      namespace: more.namespace ?? 'shop',
      uid: more.uid ?? `uid-${name}`,
      ...(ageDays !== undefined
        ? {
            creationTimestamp: new Date(
              NOW.getTime() - ageDays * DAY_MS,
            ).toISOString() as unknown as Date,
          }
        : {}),
      labels: {
        'app.kubernetes.io/managed-by': 'pvc-pruner',
        'pvc-pruner.backstage.io/job': JOB,
        'pvc-pruner.backstage.io/statefulset': 'orders-db',
      },
      annotations: {
        'pvc-pruner.backstage.io/claim-name': `claim-of-${name}`,
        ...(more.keepUntil
          ? { 'pvc-pruner.backstage.io/keep-until': more.keepUntil }
          : {}),
      },
    },
    spec: { source: { persistentVolumeClaimName: `claim-of-${name}` } },
  });
}

/** A gateway serving these snapshots and claims, recording deletions. */
function fakeGateway(
  cluster: string,
  snapshots: VolumeSnapshot[],
  claims: V1PersistentVolumeClaim[] = [],
  failures: { list?: Error; delete?: Map<string, Error> } = {},
) {
  const deleted: Array<{ namespace: string; name: string; uid: string }> = [];
  const preconditions: Array<{ uid: string; resourceVersion?: string }> = [];
  const selectors: Array<string | undefined>[] = [];
  const gateway = {
    cluster,
    listVolumeSnapshots: async (
      namespace: string | undefined,
      selector: string,
    ) => {
      selectors.push([namespace, selector]);
      if (failures.list) throw failures.list;
      return snapshots;
    },
    listClaims: async (namespace: string) =>
      claims.filter(c => c.metadata?.namespace === namespace),
    deleteVolumeSnapshot: async (
      namespace: string,
      name: string,
      pre: { uid: string; resourceVersion?: string },
    ) => {
      preconditions.push(pre);
      const failure = failures.delete?.get(name);
      if (failure) throw failure;
      deleted.push({ namespace, name, uid: pre.uid });
      return {};
    },
  } as unknown as KubeGateway;
  return { gateway, deleted, selectors, preconditions };
}

const located = (name: string, authProvider = 'serviceAccount') =>
  ({ name, authProvider } as unknown as LocatedCluster);

function setUp(
  gateways: Array<ReturnType<typeof fakeGateway>>,
  options: {
    clientSide?: string[];
    jobs?: PruneJob[];
    maxDeletionsPerCluster?: number;
    retentionDays?: number;
  } = {},
) {
  const { auditor, events: audits } = recordingAuditor();
  const appended: any[] = [];
  const logger = mockServices.logger.mock();
  const expiry = new SnapshotExpiryTask({
    clusters: {
      list: async () => gateways.map(g => located(g.gateway.cluster)),
      forCluster: c =>
        gateways.find(g => g.gateway.cluster === c.name)!.gateway,
    },
    clientSide: c => (options.clientSide ?? []).includes(c.name),
    history: {
      getJob: async id => (options.jobs ?? []).find(j => j.id === id),
      append: async e => void appended.push(e),
    },
    auditor,
    logger,
    seal: TEST_SEAL,
    retentionDays: options.retentionDays ?? 7,
    now: () => NOW,
    maxDeletionsPerCluster: options.maxDeletionsPerCluster,
  });
  return { expiry, audits, appended, logger };
}

const job = (over: Partial<PruneJob> = {}): PruneJob =>
  ({
    id: JOB,
    cluster: 'demo',
    namespace: 'shop',
    statefulSet: 'orders-db',
    ...over,
  } as PruneJob);

describe('SnapshotExpiryTask', () => {
  it('lists the managed snapshots cluster-wide and deletes only the expired ones, each by its uid', async () => {
    const demo = fakeGateway('demo', [
      snapshot('old', 8),
      snapshot('fresh', 6),
      snapshot('exactly', 7),
    ]);
    const { expiry } = setUp([demo]);

    const [result] = await expiry.run();

    expect(demo.selectors).toEqual([[undefined, MANAGED_SNAPSHOTS]]);
    expect(MANAGED_SNAPSHOTS).toBe('app.kubernetes.io/managed-by=pvc-pruner');
    expect(demo.deleted).toEqual([
      { namespace: 'shop', name: 'old', uid: 'uid-old' },
      { namespace: 'shop', name: 'exactly', uid: 'uid-exactly' },
    ]);
    expect(result.deleted).toEqual(['shop/old', 'shop/exactly']);
  });

  it('never deletes a snapshot only labelled as pvc-pruner’s, without its seal, and says why', async () => {
    const { metadata, spec } = snapshot('planted', 30);
    const planted: VolumeSnapshot = {
      spec,
      metadata: {
        ...metadata,
        annotations: {
          'pvc-pruner.backstage.io/claim-name': 'claim-of-planted',
        },
      },
    };
    const demo = fakeGateway('demo', [planted]);
    const { expiry } = setUp([demo]);
    const [result] = await expiry.run();
    expect(demo.deleted).toEqual([]);
    expect(result.kept).toEqual([
      {
        snapshot: 'shop/planted',
        reason: expect.stringContaining('pvc-pruner did not take it'),
      },
    ]);
  });

  it('deletes with the resourceVersion it listed, so a keep or a restore since the list makes the delete fail', async () => {
    const demo = fakeGateway('demo', [snapshot('old', 8)]);
    const { expiry } = setUp([demo]);
    await expiry.run();
    expect(demo.preconditions).toEqual([
      { uid: 'uid-old', resourceVersion: 'rv-old' },
    ]);
  });

  it('keeps an expired snapshot whose keep-until is later, and deletes one whose keep-until has passed', async () => {
    const demo = fakeGateway('demo', [
      snapshot('kept', 30, { keepUntil: '2026-12-21T00:00:00Z' }),
      snapshot('passed', 30, { keepUntil: '2026-12-19T00:00:00Z' }),
    ]);
    const { expiry } = setUp([demo]);
    await expiry.run();
    expect(demo.deleted.map(d => d.name)).toEqual(['passed']);
  });

  it('never deletes a snapshot whose keep-until is unreadable, or one without a creationTimestamp, and says why', async () => {
    const demo = fakeGateway('demo', [
      snapshot('unreadable', 400, { keepUntil: 'until the audit is over' }),
      snapshot('undated', undefined),
    ]);
    const { expiry } = setUp([demo]);
    const [result] = await expiry.run();
    expect(demo.deleted).toEqual([]);
    expect(result.kept).toEqual([
      {
        snapshot: 'shop/unreadable',
        reason: expect.stringContaining('"until the audit is over"'),
      },
      { snapshot: 'shop/undated', reason: 'it has no creationTimestamp' },
    ]);
  });

  it('keeps an expired snapshot a claim is still being restored from, by dataSource or dataSourceRef, until that claim is Bound', async () => {
    const claim = (
      name: string,
      phase: string,
      source: 'dataSource' | 'dataSourceRef',
      snapshotName: string,
    ): V1PersistentVolumeClaim => ({
      metadata: { name, namespace: 'shop' },
      spec: {
        [source]: {
          apiGroup: 'snapshot.storage.k8s.io',
          kind: 'VolumeSnapshot',
          name: snapshotName,
        },
      },
      status: { phase },
    });
    const demo = fakeGateway(
      'demo',
      [snapshot('a', 8), snapshot('b', 8), snapshot('c', 8)],
      [
        claim('restoring-a', 'Pending', 'dataSource', 'a'),
        claim('restoring-b', 'Pending', 'dataSourceRef', 'b'),
        claim('restored-c', 'Bound', 'dataSource', 'c'),
      ],
    );
    const { expiry } = setUp([demo]);
    const [result] = await expiry.run();
    expect(demo.deleted.map(d => d.name)).toEqual(['c']);
    expect(result.kept.map(k => k.reason)).toEqual([
      'a claim is being restored from it',
      'a claim is being restored from it',
    ]);
  });

  it('stops at the cap of deletions per cluster and run, and says so', async () => {
    const demo = fakeGateway(
      'demo',
      ['a', 'b', 'c', 'd'].map(n => snapshot(n, 8)),
    );
    const { expiry, logger } = setUp([demo], { maxDeletionsPerCluster: 3 });
    const [result] = await expiry.run();
    expect(demo.deleted.map(d => d.name)).toEqual(['a', 'b', 'c']);
    expect(result.capped).toBe(true);
    expect(logger.info).toHaveBeenCalledWith(
      expect.stringContaining('stopped at 3 deletions in cluster "demo"'),
    );
  });

  it('goes on with the other clusters when one cannot be listed, and skips one that needs a user token, logging that once', async () => {
    const broken = fakeGateway('broken', [], [], {
      list: new ClusterRequestError('broken', 'unreachable'),
    });
    const oidc = fakeGateway('oidc', [snapshot('x', 8)]);
    const demo = fakeGateway('demo', [snapshot('old', 8)]);
    const { expiry, logger } = setUp([broken, oidc, demo], {
      clientSide: ['oidc'],
    });

    const results = await expiry.run();
    await expiry.run();

    expect(demo.deleted.map(d => d.name)).toEqual(['old', 'old']);
    expect(oidc.selectors).toEqual([]);
    expect(oidc.deleted).toEqual([]);
    expect(results.map(r => [r.cluster, r.skipped])).toEqual([
      ['broken', expect.stringContaining('unreachable')],
      ['oidc', 'needs a user token'],
      ['demo', undefined],
    ]);
    const oidcLines = logger.info.mock.calls.filter(([line]) =>
      String(line).includes('skips cluster "oidc"'),
    );
    expect(oidcLines).toHaveLength(1);
    // The same failure each hour is logged once.
    const brokenLines = logger.warn.mock.calls.filter(([line]) =>
      String(line).includes('could not read cluster "broken"'),
    );
    expect(brokenLines).toHaveLength(1);
  });

  it('audits each deletion and tells the history of the job that took the snapshot, when that job is of the same cluster and namespace', async () => {
    const demo = fakeGateway('demo', [
      snapshot('mine', 8),
      snapshot('elsewhere', 8, { namespace: 'other' }),
    ]);
    const { expiry, audits, appended } = setUp([demo], { jobs: [job()] });
    await expiry.run();

    expect(audits.map(a => [a.options.eventId, a.outcome])).toEqual([
      ['snapshot-expired', 'success'],
      ['snapshot-expired', 'success'],
    ]);
    expect(audits[0].options).toMatchObject({
      severityLevel: 'medium',
      meta: {
        cluster: 'demo',
        namespace: 'shop',
        snapshot: 'mine',
        uid: 'uid-mine',
        claim: 'claim-of-mine',
        statefulSet: 'orders-db',
        expiredAt: '2026-12-19T12:00:00.000Z',
      },
    });
    // The job's namespace is shop: the snapshot in "other" is not its.
    expect(appended).toEqual([
      {
        jobId: JOB,
        type: 'snapshot-expired',
        pvc: 'claim-of-mine',
        message: expect.stringContaining('Snapshot mine of claim-of-mine'),
      },
    ]);
  });

  it("tells no job of another StatefulSet, whatever the snapshot's job label says", async () => {
    const demo = fakeGateway('demo', [snapshot('borrowed-label', 8)]);
    const { expiry, appended } = setUp([demo], {
      jobs: [job({ statefulSet: 'payments-db' })],
    });
    await expiry.run();
    expect(demo.deleted.map(d => d.name)).toEqual(['borrowed-label']);
    expect(appended).toEqual([]);
  });

  it('audits a refused deletion (the uid precondition failed) as failed, and goes on', async () => {
    const demo = fakeGateway(
      'demo',
      [snapshot('replaced', 8), snapshot('next', 8)],
      [],
      {
        delete: new Map([
          [
            'replaced',
            new ClusterRequestError('demo', 'uid mismatch', 409, 'Conflict'),
          ],
        ]),
      },
    );
    const { expiry, audits, appended } = setUp([demo], { jobs: [job()] });
    const [result] = await expiry.run();
    expect(result.failed).toEqual([
      { snapshot: 'shop/replaced', error: 'uid mismatch' },
    ]);
    expect(demo.deleted.map(d => d.name)).toEqual(['next']);
    expect(audits.map(a => a.outcome)).toEqual(['fail', 'success']);
    expect(appended.map(e => e.message)).toEqual([
      expect.stringContaining('Snapshot next'),
    ]);
  });
});
