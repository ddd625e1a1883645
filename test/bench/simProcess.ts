/**
 * The simulator for `npm run bench:backend` and `bench:fleet`, in its own
 * process so that the backend's heap growth is measured without the simulator's. Seeds namespaces
 * on request and answers the parent's questions over IPC.
 */
import {
  createTestOidcIssuer,
  KubeObject,
  KubeSim,
  pvc,
  RequestLogEntry,
  snapshotNames,
  startKubeSim,
  statefulSet,
} from 'kube-sim';

/** What the parent learns when the simulator is up. */
export interface SimReady {
  url: string;
  /** The admin token (what the serviceAccount clusters and kubectl use). */
  token: string;
  caCert: string;
  kubeconfig: string;
  /** An OIDC ID token of a user bound to every verb on every resource, for clusters of a client-side provider. */
  userToken: string;
  /** The Kubernetes user that token authenticates as. */
  userName: string;
}

/** The simulator's OIDC issuer, as kube-apiserver's --oidc-* flags would name it. */
const OIDC_ISSUER = 'https://idp.bench.example.com';
const OIDC_USER = 'bench-user@example.com';
const OIDC_GROUP = 'bench-platform';

/** Messages the parent sends; each gets exactly one reply. The parent ends the process by killing it. */
export type SimRequest =
  | {
      type: 'seed';
      namespace: string;
      id: string;
      sets: number;
      perSet: number;
      orphansPerSet: number;
      /** Give StatefulSet s its own entity id, `<id>-<distinctIdsFrom + s>` (the fleet: one entity each). */
      distinctIdsFrom?: number;
      /** Pods without claims besides (a Deployment's, say). */
      podsWithoutClaims?: number;
    }
  | { type: 'settle' }
  | { type: 'pauseControllers' }
  | { type: 'clearRequests' }
  | { type: 'requestLog' }
  | { type: 'requestCounts' }
  | { type: 'scaleByHand'; namespace: string; name: string; replicas: number }
  /** The driver's default VolumeSnapshotClass (deletionPolicy Delete), and every snapshot ready at once. */
  | { type: 'snapshotsReadyAtOnce' }
  /** What the simulator holds and served of the namespace's VolumeSnapshots and claim deletes since the log was cleared. */
  | { type: 'snapshotRecord'; namespace: string };

/** The simulator's own record of a prune's snapshots and deletes (`snapshotRecord`). */
export interface SnapshotRecordAnswer {
  /** VolumeSnapshot creates it answered 201, and claim deletes it answered 200 (dry runs excluded), since the log was cleared. */
  snapshotCreates: number;
  claimDeletes: number;
  /** The namespace's VolumeSnapshots now: the source claim of each, and whether it is readyToUse, bound to a content that names it back. */
  snapshots: Array<{ claim: string; ready: boolean }>;
}

/** Requests served since the log was last cleared, by verb, and the watch events written since then. */
export interface RequestCounts {
  byVerb: Record<string, number>;
  /** Watches answered 200 (a watch is one request however long it lasts). */
  watchesOpened: number;
  /** ADDED/MODIFIED/DELETED events written on watches (bookmarks not included). */
  watchEvents: number;
}

/** Pod `ordinal` of StatefulSet `name`, mounting its `data` claim. */
function podOf(
  namespace: string,
  name: string,
  ordinal: number,
  labels: Record<string, string>,
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `${name}-${ordinal}`, namespace, labels },
    spec: {
      nodeName: 'sim-node-1',
      containers: [{ name: 'db', image: 'db:1' }],
      volumes: [
        {
          name: 'data',
          persistentVolumeClaim: { claimName: `data-${name}-${ordinal}` },
        },
      ],
    },
  } as unknown as KubeObject;
}

/** A namespace of `sets` StatefulSets with `perSet` claims each, `orphansPerSet` of them above the replica count. */
function seedNamespace(
  sim: KubeSim,
  seed: Extract<SimRequest, { type: 'seed' }>,
) {
  const { namespace, id, sets, perSet, orphansPerSet } = seed;
  const { store } = sim;
  store.create('namespaces', {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: namespace },
  } as KubeObject);
  for (let s = 0; s < sets; s++) {
    const name = `db-${s}`;
    const entityId =
      seed.distinctIdsFrom === undefined
        ? id
        : `${id}-${seed.distinctIdsFrom + s}`;
    const labels = { app: name, 'backstage.io/kubernetes-id': entityId };
    const replicas = perSet - orphansPerSet;
    store.create(
      'apps/statefulsets',
      statefulSet(name, { replicas }, namespace, labels),
    );
    for (let i = 0; i < perSet; i++) {
      const claim = `data-${name}-${i}`;
      const volume = `pv-${namespace}-${claim}`;
      const created = store.create('persistentvolumeclaims', {
        ...pvc(
          claim,
          { volumeName: volume, storageClassName: '' },
          namespace,
          labels,
        ),
        status: { phase: 'Bound', capacity: { storage: '1Gi' } },
      } as KubeObject);
      store.create('persistentvolumes', {
        apiVersion: 'v1',
        kind: 'PersistentVolume',
        metadata: {
          name: volume,
          annotations: { 'pv.kubernetes.io/provisioned-by': 'sim.csi.k8s.io' },
        },
        spec: {
          capacity: { storage: '1Gi' },
          accessModes: ['ReadWriteOnce'],
          persistentVolumeReclaimPolicy: 'Delete',
          claimRef: {
            apiVersion: 'v1',
            kind: 'PersistentVolumeClaim',
            namespace,
            name: claim,
            uid: created.metadata.uid,
          },
          csi: { driver: 'sim.csi.k8s.io', volumeHandle: volume },
        },
        status: { phase: 'Bound' },
      } as unknown as KubeObject);
      if (i < replicas) store.create('pods', podOf(namespace, name, i, labels));
    }
  }
  for (let p = 0; p < (seed.podsWithoutClaims ?? 0); p++)
    store.create('pods', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: `web-${p}`, namespace, labels: { app: 'web' } },
      spec: {
        nodeName: 'sim-node-1',
        containers: [{ name: 'web', image: 'web:1' }],
      },
    } as unknown as KubeObject);
}

/** Waits until the simulator's controllers have nothing left to do with the seeded objects. */
async function settled(sim: KubeSim) {
  const started = performance.now();
  while (!sim.controllersIdle()) {
    if (performance.now() - started > 120000)
      throw new Error('the simulator did not settle in 2 minutes');
    await new Promise(resolve => setTimeout(resolve, 50));
  }
}

/** A request the simulator served, as the benchmarks classify them. */
export type LoggedRequest = Pick<
  RequestLogEntry,
  'verb' | 'path' | 'namespace' | 'resource' | 'user' | 'status' | 'time'
>;

async function main() {
  const issuer = await createTestOidcIssuer({
    issuer: OIDC_ISSUER,
    audiences: ['backstage'],
    usernameClaim: 'email',
    groupsClaim: 'groups',
  });
  const sim = await startKubeSim({
    https: true,
    timeFactor: 0.01,
    historyLimit: 300000,
    auth: {
      oidc: [issuer.options],
      bindings: [
        {
          subjects: [{ kind: 'Group', name: OIDC_GROUP }],
          rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }],
        },
      ],
    },
  });
  // Valid for longer than any benchmark runs.
  const userToken = await issuer.idToken(
    { email: OIDC_USER, email_verified: true, groups: [OIDC_GROUP] },
    '6h',
  );
  let watchEvents = 0;
  const watch = sim.store.watch.bind(sim.store);
  sim.store.watch = (resource, options, onEvent) =>
    watch(resource, options, event => {
      watchEvents++;
      onEvent(event);
    });
  process.on('message', async (msg: SimRequest) => {
    if (msg.type === 'seed') {
      seedNamespace(sim, msg);
      process.send!({ claims: msg.sets * msg.perSet });
    } else if (msg.type === 'settle') {
      await settled(sim);
      process.send!({});
    } else if (msg.type === 'pauseControllers') {
      sim.pauseControllers();
      process.send!({});
    } else if (msg.type === 'clearRequests') {
      sim.clearRequests();
      watchEvents = 0;
      process.send!({});
    } else if (msg.type === 'requestCounts') {
      const log = sim.requests();
      const byVerb: Record<string, number> = {};
      for (const r of log) byVerb[r.verb] = (byVerb[r.verb] ?? 0) + 1;
      process.send!({
        byVerb,
        watchesOpened: log.filter(r => r.verb === 'watch' && r.status === 200)
          .length,
        watchEvents,
      } satisfies RequestCounts);
    } else if (msg.type === 'scaleByHand') {
      // With the controllers paused: the new replica count, and the pod the controller would add or remove.
      const { namespace, name, replicas } = msg;
      const sts = structuredClone(
        sim.store.require('apps/statefulsets', namespace, name),
      );
      const before = sts.spec.replicas;
      sts.spec.replicas = replicas;
      sim.store.update('apps/statefulsets', sts);
      for (let i = replicas; i < before; i++)
        sim.store.delete('pods', namespace, `${name}-${i}`, {
          gracePeriodSeconds: 0,
        });
      for (let i = before; i < replicas; i++)
        sim.store.create(
          'pods',
          podOf(namespace, name, i, sts.metadata.labels ?? {}),
        );
      process.send!({});
    } else if (msg.type === 'snapshotsReadyAtOnce') {
      sim.store.create(snapshotNames.SNAPSHOT_CLASSES, {
        apiVersion: 'snapshot.storage.k8s.io/v1',
        kind: 'VolumeSnapshotClass',
        metadata: {
          name: 'bench-snapshots',
          annotations: {
            [snapshotNames.DEFAULT_SNAPSHOT_CLASS_ANNOTATION]: 'true',
          },
        },
        driver: 'sim.csi.k8s.io',
        deletionPolicy: 'Delete',
      } as unknown as KubeObject);
      sim.addSnapshotBehaviour({ readyAfterSeconds: 0 });
      process.send!({});
    } else if (msg.type === 'snapshotRecord') {
      const served = sim
        .requests()
        .filter(
          r =>
            r.namespace === msg.namespace &&
            !/(^|&)dryRun=/.test(r.query ?? ''),
        );
      const snapshots = sim.store
        .list(snapshotNames.SNAPSHOTS, { namespace: msg.namespace })
        .items.map(snap => {
          const contentName = snap.status?.boundVolumeSnapshotContentName;
          const content = contentName
            ? sim.store.get(snapshotNames.CONTENTS, undefined, contentName)
            : undefined;
          return {
            claim: snap.spec?.source?.persistentVolumeClaimName as string,
            ready:
              snap.status?.readyToUse === true &&
              content?.spec?.volumeSnapshotRef?.uid === snap.metadata.uid,
          };
        });
      process.send!({
        snapshotCreates: served.filter(
          r =>
            r.verb === 'create' &&
            r.resource === 'volumesnapshots' &&
            r.status === 201,
        ).length,
        claimDeletes: served.filter(
          r =>
            r.verb === 'delete' &&
            r.resource === 'persistentvolumeclaims' &&
            (r.status === 200 || r.status === 202),
        ).length,
        snapshots,
      } satisfies SnapshotRecordAnswer);
    } else if (msg.type === 'requestLog') {
      process.send!(
        sim.requests().map(
          ({ verb, path, namespace, resource, user, status, time }) =>
            ({
              verb,
              path,
              namespace,
              resource,
              user,
              status,
              time,
            } satisfies LoggedRequest),
        ),
      );
    }
  });
  process.send!({
    url: sim.url,
    token: sim.token,
    caCert: sim.caCert!,
    kubeconfig: sim.kubeconfig,
    userToken,
    userName: OIDC_USER,
  } satisfies SimReady);
}

main().catch(e => {
  process.stderr.write(`${e.stack}\n`);
  process.exit(1);
});
