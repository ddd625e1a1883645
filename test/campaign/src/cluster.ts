/**
 * The cluster side of a scenario: its objects written into the simulator,
 * and the chaos a cluster's other users and controllers cause while a prune
 * runs. Written straight into the simulator's store, as kubectl would.
 */
import {
  horizontalPodAutoscaler,
  KubeObject,
  KubeSim,
  manifest,
  pvc,
  statefulSet,
} from 'kube-sim';
import { KEEP_CLAIM_ANNOTATION } from 'backstage-plugin-pvc-pruner-common';
import {
  AutoscalerPlan,
  ClaimPlan,
  SnapshotClassPlan,
  Scenario,
  StatefulSetPlan,
  Team,
  TEAM_IDS,
} from './scenario';

export const FOREIGN_FINALIZER = 'acc.example/backup-hold';
const KUBERNETES_ID = 'backstage.io/kubernetes-id';
const HPAS = 'autoscaling/horizontalpodautoscalers';
const STORAGE_CLASSES = {
  Delete: 'campaign-delete',
  Retain: 'campaign-retain',
};
const DRIVER = 'sim.csi.k8s.io';
/** A driver the simulator provisions for, with no VolumeSnapshotClass at all. */
const DRIVER_WITHOUT_SNAPSHOTS = 'nosnap.csi.k8s.io';
/**
 * The StorageClass of a Delete volume by the VolumeSnapshotClass its
 * snapshots get: the driver's default (deletionPolicy Delete), the one the
 * replicas' `snapshots.storageClasses` maps it to (deletionPolicy Retain),
 * or none (its driver has no class).
 */
const DELETE_CLASS_BY_SNAPSHOT_CLASS: Record<SnapshotClassPlan, string> = {
  'default-delete': STORAGE_CLASSES.Delete,
  'mapped-retain': 'campaign-delete-keep-snapshots',
  none: 'campaign-delete-no-snapshots',
};
/** `pvcPruner.snapshots.storageClasses` of the replicas. */
export const SNAPSHOT_CLASS_MAP: Record<string, string> = {
  [DELETE_CLASS_BY_SNAPSHOT_CLASS['mapped-retain']]:
    'campaign-snapshots-retain',
};
const SNAPSHOTS = 'snapshot.storage.k8s.io/volumesnapshots';
const CLAIMS = 'persistentvolumeclaims';
const VOLUMES = 'persistentvolumes';
const STS = 'apps/statefulsets';
const sleep = (ms: number) => new Promise(r => setTimeout(r, ms));

/** The two StorageClasses the scenarios' claims use, once per simulator. */
export function createStorageClasses(sim: KubeSim) {
  for (const [policy, name] of Object.entries(STORAGE_CLASSES)) {
    sim.store.create(
      'storage.k8s.io/storageclasses',
      manifest({
        apiVersion: 'storage.k8s.io/v1',
        kind: 'StorageClass',
        metadata: { name },
        provisioner: 'sim.csi.k8s.io',
        reclaimPolicy: policy,
        volumeBindingMode: 'Immediate',
      }),
    );
  }
  for (const [name, provisioner] of [
    [DELETE_CLASS_BY_SNAPSHOT_CLASS['mapped-retain'], DRIVER],
    [DELETE_CLASS_BY_SNAPSHOT_CLASS.none, DRIVER_WITHOUT_SNAPSHOTS],
  ])
    sim.store.create(
      'storage.k8s.io/storageclasses',
      manifest({
        apiVersion: 'storage.k8s.io/v1',
        kind: 'StorageClass',
        metadata: { name },
        provisioner,
        reclaimPolicy: 'Delete',
        volumeBindingMode: 'Immediate',
      }),
    );
  // The driver's default class (Delete), and the mapped one (Retain: its
  // content, the data, outlives a VolumeSnapshot deleted by hand).
  for (const [name, deletionPolicy, isDefault] of [
    ['campaign-snapshots', 'Delete', true],
    [
      SNAPSHOT_CLASS_MAP[DELETE_CLASS_BY_SNAPSHOT_CLASS['mapped-retain']],
      'Retain',
      false,
    ],
  ] as const)
    sim.store.create(
      'snapshot.storage.k8s.io/volumesnapshotclasses',
      manifest({
        apiVersion: 'snapshot.storage.k8s.io/v1',
        kind: 'VolumeSnapshotClass',
        metadata: {
          name,
          ...(isDefault
            ? {
                annotations: {
                  'snapshot.storage.kubernetes.io/is-default-class': 'true',
                },
              }
            : {}),
        },
        driver: DRIVER,
        deletionPolicy,
      }),
    );
}

/** The labels of a StatefulSet of this team: its kubernetes-id (none for nobody's) and app. */
export function labelsOf(
  team: Team,
  name: string,
  kubernetesId?: string,
): Record<string, string> {
  const id = kubernetesId ?? TEAM_IDS[team];
  return { ...(id ? { [KUBERNETES_ID]: id } : {}), app: name };
}

function statefulSetManifest(plan: StatefulSetPlan, namespace: string) {
  return statefulSet(
    plan.name,
    {
      replicas: plan.replicas,
      ordinals: { start: plan.start },
      podManagementPolicy: plan.podManagementPolicy,
      persistentVolumeClaimRetentionPolicy: plan.retention,
      volumeClaimTemplates: plan.templates.map(t => ({
        metadata: { name: t },
        spec: {
          accessModes: ['ReadWriteOnce'],
          storageClassName: STORAGE_CLASSES.Delete,
          resources: { requests: { storage: '1Gi' } },
        },
      })),
    },
    namespace,
    labelsOf(plan.team, plan.name, plan.kubernetesId),
  );
}

function autoscalerManifest(plan: AutoscalerPlan, namespace: string) {
  return horizontalPodAutoscaler(
    plan.name,
    plan.target.name,
    { minReplicas: plan.minReplicas, maxReplicas: plan.maxReplicas },
    namespace,
    {
      scaleTargetRef: {
        apiVersion: 'apps/v1',
        kind: plan.target.kind,
        name: plan.target.name,
      },
    },
  );
}

function claimManifest(plan: ClaimPlan, namespace: string) {
  const claim = pvc(
    plan.name,
    {
      storageClassName:
        plan.reclaimPolicy === 'Retain'
          ? STORAGE_CLASSES.Retain
          : DELETE_CLASS_BY_SNAPSHOT_CLASS[
              plan.snapshotClass ?? 'default-delete'
            ],
    },
    namespace,
    plan.labels,
  );
  if (plan.foreignFinalizer) claim.metadata.finalizers = [FOREIGN_FINALIZER];
  return claim;
}

function podManifest(name: string, claim: string, namespace: string) {
  return manifest({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace },
    spec: {
      nodeName: 'sim-node-1',
      terminationGracePeriodSeconds: 30,
      containers: [{ name: 'main', image: 'busybox:1.36' }],
      volumes: [{ name: 'v', persistentVolumeClaim: { claimName: claim } }],
    },
  });
}

/** Waits until the controllers have nothing queued, up to `ms`. */
export async function settle(sim: KubeSim, ms: number) {
  const deadline = Date.now() + ms;
  while (!sim.controllersIdle() && Date.now() < deadline) await sleep(25);
}

/** Writes the scenario's namespace, claims, StatefulSets and pods, and lets the controllers settle. */
export async function seedCluster(sim: KubeSim, scenario: Scenario) {
  const { store } = sim;
  const ns = scenario.namespace;
  store.create(
    'namespaces',
    manifest({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }),
  );
  for (const claim of scenario.claims)
    store.create(CLAIMS, claimManifest(claim, ns));
  for (const sts of scenario.statefulSets)
    store.create(STS, statefulSetManifest(sts, ns));
  for (const hpa of scenario.autoscalers)
    store.create(HPAS, autoscalerManifest(hpa, ns));
  for (const pod of scenario.pods) {
    store.create('pods', podManifest(pod.name, pod.claim, ns));
    if (pod.terminatingGraceSeconds)
      store.delete('pods', ns, pod.name, {
        gracePeriodSeconds: pod.terminatingGraceSeconds,
      });
  }
  await settle(sim, 15000);
}

/** `kubectl delete sts` of the StatefulSets deleted before the scan: their pods go, their claims (whenDeleted: Retain) stay. */
export async function deleteBeforeScan(sim: KubeSim, scenario: Scenario) {
  const ns = scenario.namespace;
  const deleted = scenario.statefulSets.filter(s => s.deletedBeforeScan);
  for (const sts of deleted) {
    const uid = sim.store.get(STS, ns, sts.name)?.metadata.uid;
    sim.store.delete(STS, ns, sts.name, { propagationPolicy: 'Background' });
    if (uid) await waitGone(sim, STS, ns, sts.name, uid);
  }
  if (deleted.length > 0) await settle(sim, 15000);
}

/** Applies `change` to the latest version, retrying on conflicts with the controllers. */
function mutate(
  sim: KubeSim,
  resource: string,
  namespace: string | undefined,
  name: string,
  change: (obj: KubeObject) => void,
) {
  for (let attempt = 0; attempt < 5; attempt++) {
    const current = sim.store.get(resource, namespace, name);
    if (!current) return;
    const copy = structuredClone(current);
    change(copy);
    try {
      sim.store.update(resource, copy);
      return;
    } catch (e) {
      if ((e as { code?: number }).code !== 409) throw e;
    }
  }
}

async function waitGone(
  sim: KubeSim,
  resource: string,
  ns: string,
  name: string,
  uid: string,
) {
  const deadline = Date.now() + 5000;
  while (Date.now() < deadline) {
    const now = sim.store.get(resource, ns, name);
    if (!now || now.metadata.uid !== uid) return true;
    await sleep(20);
  }
  return false;
}

export const chaos = {
  scale(sim: KubeSim, ns: string, sts: string, replicas: number) {
    mutate(sim, STS, ns, sts, o => {
      o.spec.replicas = replicas;
    });
  },

  setStart(sim: KubeSim, ns: string, sts: string, start: number) {
    mutate(sim, STS, ns, sts, o => {
      o.spec.ordinals = { start };
    });
  },

  /**
   * Deleted and created again under the same name: a new uid, with the old
   * one's spec and maybe `replicas` of its own, after `absentMs` gone.
   */
  async recreateStatefulSet(
    sim: KubeSim,
    scenario: Scenario,
    sts: string,
    change: { replicas?: number; absentMs?: number } = {},
  ) {
    const old = sim.store.get(STS, scenario.namespace, sts);
    if (!old) return;
    const spec = structuredClone(old.spec);
    if (change.replicas !== undefined) spec.replicas = change.replicas;
    sim.store.delete(STS, scenario.namespace, sts, {
      propagationPolicy: 'Background',
    });
    if (await waitGone(sim, STS, scenario.namespace, sts, old.metadata.uid)) {
      if (change.absentMs) await sleep(change.absentMs);
      chaos.createStatefulSet(sim, scenario, sts, spec.replicas, spec);
    }
  },

  /** Created (again) under its plan's name, as a user re-applying its manifest would: a new uid. */
  createStatefulSet(
    sim: KubeSim,
    scenario: Scenario,
    sts: string,
    replicas: number,
    spec?: KubeObject['spec'],
  ) {
    if (sim.store.get(STS, scenario.namespace, sts)) return;
    const plan = scenario.statefulSets.find(s => s.name === sts)!;
    const fresh = statefulSetManifest(plan, scenario.namespace);
    if (spec) fresh.spec = spec;
    fresh.spec.replicas = replicas;
    sim.store.create(STS, fresh);
  },

  /** An orphan deleted and created again under the same name: a new uid. */
  async recreateClaim(sim: KubeSim, scenario: Scenario, name: string) {
    const old = sim.store.get(CLAIMS, scenario.namespace, name);
    if (!old) return;
    const plan = scenario.claims.find(c => c.name === name)!;
    sim.store.delete(CLAIMS, scenario.namespace, name);
    if (
      !(await waitGone(sim, CLAIMS, scenario.namespace, name, old.metadata.uid))
    )
      return;
    if (!sim.store.get(CLAIMS, scenario.namespace, name))
      sim.store.create(
        CLAIMS,
        claimManifest({ ...plan, foreignFinalizer: false }, scenario.namespace),
      );
  },

  mount(sim: KubeSim, ns: string, claim: string, podName: string) {
    sim.store.create('pods', podManifest(podName, claim, ns));
  },

  createAutoscaler(sim: KubeSim, ns: string, plan: AutoscalerPlan) {
    if (!sim.store.get(HPAS, ns, plan.name))
      sim.store.create(HPAS, autoscalerManifest(plan, ns));
  },

  raiseAutoscaler(sim: KubeSim, ns: string, name: string, maxReplicas: number) {
    mutate(sim, HPAS, ns, name, o => {
      o.spec.maxReplicas = Math.max(o.spec.maxReplicas, maxReplicas);
    });
  },

  /**
   * Deletes the claim's VolumeSnapshot by hand, as `kubectl delete
   * volumesnapshot` would, at its first moment `when` (created: while the
   * job waits for it; ready: before the claim's delete). Returns the
   * unsubscribe; `fired` counts the deletions.
   */
  deleteSnapshotWhen(
    sim: KubeSim,
    ns: string,
    claim: string,
    when: 'created' | 'ready',
    fired: () => void,
  ): () => void {
    let done = false;
    const unsubscribe = sim.store.subscribe(event => {
      const snap = event.object;
      if (
        done ||
        event.resource !== SNAPSHOTS ||
        event.type === 'DELETED' ||
        snap.metadata.namespace !== ns ||
        snap.spec?.source?.persistentVolumeClaimName !== claim ||
        snap.metadata.deletionTimestamp ||
        (when === 'ready' && snap.status?.readyToUse !== true)
      )
        return;
      done = true;
      // Not inside the store's own dispatch: as a client would, a moment later.
      setImmediate(() => {
        try {
          sim.store.delete(SNAPSHOTS, ns, snap.metadata.name);
          fired();
        } catch {
          // gone already
        }
      });
    });
    return unsubscribe;
  },

  /**
   * A Released volume handed to a new claim, as an administrator re-uses a
   * Retain volume: its claimRef pre-bound to claim `claim` (no uid yet),
   * and that claim created naming the volume; the binder binds them.
   */
  rebindVolume(sim: KubeSim, ns: string, volume: string, claim: string) {
    const pv = sim.store.get(VOLUMES, undefined, volume);
    if (!pv || pv.metadata.deletionTimestamp) return false;
    mutate(sim, VOLUMES, undefined, volume, o => {
      o.spec.claimRef = {
        kind: 'PersistentVolumeClaim',
        namespace: ns,
        name: claim,
      };
    });
    if (!sim.store.get(CLAIMS, ns, claim))
      sim.store.create(
        CLAIMS,
        pvc(
          claim,
          { storageClassName: pv.spec.storageClassName, volumeName: volume },
          ns,
        ),
      );
    return true;
  },

  /** Someone changes the volume (a label): its resourceVersion moves on. */
  touchVolume(sim: KubeSim, volume: string) {
    mutate(sim, VOLUMES, undefined, volume, o => {
      o.metadata.labels = {
        ...o.metadata.labels,
        'campaign.example/touched': 'yes',
      };
    });
  },

  /** A claim created again under a released one's name: a new uid, and a new volume; the released one stays released from the old uid. */
  recreateReleasedClaim(sim: KubeSim, scenario: Scenario, name: string) {
    const plan = scenario.claims.find(c => c.name === name);
    if (!plan || sim.store.get(CLAIMS, scenario.namespace, name)) return;
    sim.store.create(
      CLAIMS,
      claimManifest({ ...plan, foreignFinalizer: false }, scenario.namespace),
    );
  },

  /**
   * `kubectl annotate pvc <claim> pvc-pruner.backstage.io/keep=<value>
   * --overwrite` (a merge patch of its annotations), or with no value the
   * annotation removed (`keep-`). Returns the claim's uid, when it exists.
   */
  annotateKeep(
    sim: KubeSim,
    ns: string,
    claim: string,
    value: string | undefined,
  ): string | undefined {
    let uid: string | undefined;
    mutate(sim, CLAIMS, ns, claim, o => {
      uid = o.metadata.uid;
      const annotations = { ...(o.metadata.annotations ?? {}) };
      if (value === undefined) delete annotations[KEEP_CLAIM_ANNOTATION];
      else annotations[KEEP_CLAIM_ANNOTATION] = value;
      o.metadata.annotations = annotations;
    });
    return uid;
  },

  /** Its kubernetes-id label becomes another team's (or goes): other entities claim it now. */
  relabel(sim: KubeSim, ns: string, sts: string, team: Team) {
    mutate(sim, STS, ns, sts, o => {
      o.metadata.labels = labelsOf(team, sts);
    });
  },
};

/** Removes the foreign finalizers and the namespace; the namespace controller does the rest. */
export function cleanUp(sim: KubeSim, scenario: Scenario) {
  const ns = scenario.namespace;
  for (const claim of sim.store.list(CLAIMS, { namespace: ns }).items) {
    if (claim.metadata.finalizers?.includes(FOREIGN_FINALIZER))
      mutate(sim, CLAIMS, ns, claim.metadata.name, o => {
        o.metadata.finalizers = o.metadata.finalizers!.filter(
          f => f !== FOREIGN_FINALIZER,
        );
      });
  }
  // Its Retain volumes are reclaimed once released, so they do not pile up
  // (nor crowd the next scenarios' Released volumes out of a capped list).
  for (const pv of sim.store.list(VOLUMES).items)
    if (
      pv.spec?.claimRef?.namespace === ns &&
      pv.spec.persistentVolumeReclaimPolicy !== 'Delete'
    )
      mutate(sim, VOLUMES, undefined, pv.metadata.name, o => {
        o.spec.persistentVolumeReclaimPolicy = 'Delete';
      });
  try {
    sim.store.delete('namespaces', undefined, ns);
  } catch {
    // already going
  }
}
