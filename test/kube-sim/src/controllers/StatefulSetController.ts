import { labelSelectorMatcher } from '../selectors';
import { KubeObject, StoreEvent } from '../types';
import { Controller, keyOf, Requeue, splitKey } from './Controller';
import { EventRecorder } from './EventRecorder';
import {
  claimOwnerRefs,
  claimOwnerUpToDate,
  claimsFor,
  hasStalePodRef,
  identityMatches,
  inOrdinalRange,
  newPod,
  ordinalOf,
  parentAndOrdinal,
  podName,
  POD_INDEX_LABEL,
  POD_NAME_LABEL,
  retentionPolicy,
  REVISION_LABEL,
  revisionName,
  startOrdinal,
  storageMatches,
  storageVolumes,
} from './statefulSetUtils';
import { controllerOf, errorCode, isRunningAndReady, ownerRefTo } from './util';

const SETS = 'apps/statefulsets';

interface Revisions {
  current: string;
  update: string;
  currentTemplate: any;
}

/**
 * The StatefulSet controller (pkg/controller/statefulset): ordered or
 * parallel pod management, PVCs from volumeClaimTemplates created before
 * their pod, PVC retention policy, rolling updates and status.
 */
export class StatefulSetController extends Controller {
  readonly name = 'statefulset-controller';
  private readonly events = new EventRecorder(
    this.ctx.store,
    'statefulset-controller',
  );
  private readonly podsByParent = this.index('pods', pod => {
    const parsed = parentAndOrdinal(pod.metadata.name);
    return parsed ? [`${pod.metadata.namespace}/${parsed.parent}`] : [];
  });
  /** Templates by revision, standing in for ControllerRevision objects. */
  private readonly templates = new Map<string, any>();
  /** Claim key → set waiting for that claim to change (being deleted, or stale). */
  private readonly waitingOnClaim = new Map<string, string>();

  protected initialKeys() {
    return this.ctx.store.list(SETS).items.map(keyOf);
  }

  protected keysFor(event: StoreEvent): string[] {
    const obj = event.object;
    if (event.resource === SETS) return [keyOf(obj)];
    if (event.resource === 'pods') {
      const parsed = parentAndOrdinal(obj.metadata.name);
      return parsed ? [`${obj.metadata.namespace}/${parsed.parent}`] : [];
    }
    if (event.resource === 'persistentvolumeclaims') {
      const waiting = this.waitingOnClaim.get(keyOf(obj));
      if (waiting) this.waitingOnClaim.delete(keyOf(obj));
      return waiting ? [waiting] : [];
    }
    return [];
  }

  protected reconcile(key: string) {
    const [namespace, name] = splitKey(key);
    const set = this.ctx.store.get(SETS, namespace, name);
    if (!set) return;
    const revisions = this.revisions(set);
    let failure: unknown;
    try {
      if (!set.metadata.deletionTimestamp)
        this.sync(set, this.claimPods(set), revisions);
    } catch (e) {
      failure = e;
    }
    this.updateStatus(set, revisions);
    if (failure) throw failure;
  }

  private revisions(set: KubeObject): Revisions {
    const update = revisionName(set, set.status?.collisionCount ?? 0);
    const ns = set.metadata.namespace;
    this.templates.set(`${ns}/${update}`, set.spec.template);
    const current = set.status?.currentRevision || update;
    return {
      current,
      update,
      currentTemplate:
        this.templates.get(`${ns}/${current}`) ?? set.spec.template,
    };
  }

  /** Pods controlled by the set, adopting matching orphans and releasing non-matching pods (ClaimPods). */
  private claimPods(set: KubeObject): KubeObject[] {
    const store = this.ctx.store;
    const selector = labelSelectorMatcher(set.spec.selector ?? {});
    const pods: KubeObject[] = [];
    for (const podKey of this.podsByParent.get(keyOf(set))) {
      const [ns, name] = splitKey(podKey);
      const pod = store.get('pods', ns, name);
      if (!pod) continue;
      const owner = controllerOf(pod);
      const matches = selector(pod.metadata.labels);
      if (owner) {
        if (owner.uid !== set.metadata.uid) continue;
        if (matches) pods.push(pod);
        else {
          const copy = structuredClone(pod);
          copy.metadata.ownerReferences = copy.metadata.ownerReferences!.filter(
            r => r.uid !== set.metadata.uid,
          );
          store.update('pods', copy);
        }
      } else if (matches && !pod.metadata.deletionTimestamp) {
        const copy = structuredClone(pod);
        copy.metadata.ownerReferences = [
          ...(copy.metadata.ownerReferences ?? []),
          ownerRefTo(set, true),
        ];
        pods.push(store.update('pods', copy));
      }
    }
    return pods;
  }

  private ownedPods(set: KubeObject): KubeObject[] {
    return this.podsByParent.get(keyOf(set)).flatMap(podKey => {
      const [ns, name] = splitKey(podKey);
      const pod = this.ctx.store.get('pods', ns, name);
      return pod && controllerOf(pod)?.uid === set.metadata.uid ? [pod] : [];
    });
  }

  /** updateStatefulSet in stateful_set_control.go. */
  private sync(set: KubeObject, pods: KubeObject[], revisions: Revisions) {
    const start = startOrdinal(set);
    const replicas: Array<KubeObject | undefined> = new Array(
      set.spec.replicas,
    ).fill(undefined);
    const condemned: KubeObject[] = [];
    for (const pod of pods) {
      const ordinal = ordinalOf(pod);
      if (inOrdinalRange(ordinal, set)) replicas[ordinal - start] = pod;
      else if (ordinal >= 0) condemned.push(pod);
    }
    condemned.sort((a, b) => ordinalOf(b) - ordinalOf(a));
    const healthy = (pod?: KubeObject) =>
      !!pod && isRunningAndReady(pod) && !pod.metadata.deletionTimestamp;
    const firstUnhealthy =
      replicas.findIndex(p => !healthy(p)) >= 0
        ? undefined
        : [...condemned].reverse().find(p => !healthy(p));
    const monotonic = set.spec.podManagementPolicy !== 'Parallel';

    const errors: unknown[] = [];
    for (let i = 0; i < replicas.length; i++) {
      try {
        if (
          this.processReplica(
            set,
            replicas[i],
            start + i,
            monotonic,
            revisions,
          ) &&
          monotonic
        )
          return;
      } catch (e) {
        if (monotonic) throw e;
        errors.push(e);
      }
    }
    if (errors.length) throw errors[0];

    for (const pod of condemned) this.applyRetentionPolicy(set, pod);

    for (const pod of condemned) {
      if (pod.metadata.deletionTimestamp) {
        if (monotonic) return;
        continue;
      }
      if (monotonic && !this.available(set, pod) && pod !== firstUnhealthy)
        return;
      this.deletePod(set, pod);
      if (monotonic) return;
    }

    if (set.spec.updateStrategy?.type === 'OnDelete') return;
    const partition = set.spec.updateStrategy?.rollingUpdate?.partition ?? 0;
    for (let target = replicas.length - 1; target >= partition; target--) {
      const pod = this.ctx.store.get(
        'pods',
        set.metadata.namespace,
        podName(set, start + target),
      );
      if (!pod || controllerOf(pod)?.uid !== set.metadata.uid) return;
      if (
        pod.metadata.labels?.[REVISION_LABEL] !== revisions.update &&
        !pod.metadata.deletionTimestamp
      ) {
        this.deletePod(set, pod);
        return;
      }
      if (!healthy(pod)) return;
    }
  }

  /** processReplica: returns true when a monotonic set must stop here. */
  private processReplica(
    set: KubeObject,
    pod: KubeObject | undefined,
    ordinal: number,
    monotonic: boolean,
    revisions: Revisions,
  ): boolean {
    if (!pod) {
      if (this.claimIsStale(set, ordinal)) return true;
      this.createPod(set, ordinal, revisions);
      return monotonic;
    }
    const phase = pod.status?.phase;
    if (phase === 'Failed' || phase === 'Succeeded') {
      if (!pod.metadata.deletionTimestamp) this.deletePod(set, pod);
      return true;
    }
    if (phase === 'Pending') {
      this.createClaims(set, pod);
      this.applyRetentionPolicy(set, pod);
    }
    if (
      monotonic &&
      (pod.metadata.deletionTimestamp || !this.available(set, pod))
    )
      return true;
    this.applyRetentionPolicy(set, pod);
    if (!identityMatches(set, pod) || !storageMatches(set, pod)) {
      const copy = structuredClone(pod);
      copy.metadata.labels = {
        ...copy.metadata.labels,
        [POD_NAME_LABEL]: pod.metadata.name,
        [POD_INDEX_LABEL]: String(ordinal),
      };
      copy.spec.volumes = storageVolumes(set, ordinal, copy.spec.volumes);
      this.createClaims(set, pod);
      this.ctx.store.update('pods', copy);
    }
    return false;
  }

  /** Running, Ready and Ready for minReadySeconds (simulated). */
  private available(set: KubeObject, pod: KubeObject) {
    if (!isRunningAndReady(pod)) return false;
    const minReady = set.spec.minReadySeconds ?? 0;
    if (minReady <= 0) return true;
    const ready = pod.status.conditions.find((c: any) => c.type === 'Ready');
    const since = Date.now() - Date.parse(ready?.lastTransitionTime ?? '');
    if (since >= this.ctx.clock.toMillis(minReady)) return true;
    this.enqueueAfter(keyOf(set), minReady);
    return false;
  }

  /** PodClaimIsStale: a claim still owned by a previous pod of this ordinal waits for the garbage collector. */
  private claimIsStale(set: KubeObject, ordinal: number) {
    if (retentionPolicy(set).whenScaled === 'Retain') return false;
    const pod = { metadata: { name: podName(set, ordinal) } };
    for (const { claim } of claimsFor(set, ordinal)) {
      const existing = this.ctx.store.get(
        'persistentvolumeclaims',
        set.metadata.namespace,
        claim.metadata.name,
      );
      if (existing && hasStalePodRef(existing, pod)) {
        this.waitingOnClaim.set(keyOf(existing), keyOf(set));
        return true;
      }
    }
    return false;
  }

  /** CreateStatefulPod: claims first, then the pod, then the claims' retention refs. */
  private createPod(set: KubeObject, ordinal: number, revisions: Revisions) {
    const partition = set.spec.updateStrategy?.rollingUpdate?.partition ?? 0;
    const atCurrent =
      set.spec.updateStrategy?.type !== 'OnDelete' &&
      ordinal < startOrdinal(set) + partition;
    const pod = atCurrent
      ? newPod(set, revisions.currentTemplate, ordinal, revisions.current)
      : newPod(set, set.spec.template, ordinal, revisions.update);
    const message = (verb: string, e: unknown) =>
      `${verb} Pod ${pod.metadata.name} in StatefulSet ${
        set.metadata.name
      } failed error: ${(e as Error).message}`;
    try {
      this.createClaims(set, pod);
    } catch (e) {
      this.events.warning(set, 'FailedCreate', message('create', e));
      throw e;
    }
    let created: KubeObject;
    try {
      created = this.ctx.store.create('pods', pod);
    } catch (e) {
      if (errorCode(e) !== 409)
        this.events.warning(set, 'FailedCreate', message('create', e));
      throw e;
    }
    this.applyRetentionPolicy(set, created);
    this.events.normal(
      set,
      'SuccessfulCreate',
      `create Pod ${pod.metadata.name} in StatefulSet ${set.metadata.name} successful`,
    );
  }

  /** createPersistentVolumeClaims: creates missing claims; a claim being deleted blocks the pod. */
  private createClaims(set: KubeObject, pod: KubeObject) {
    const store = this.ctx.store;
    const failures: string[] = [];
    for (const { claim } of claimsFor(set, ordinalOf(pod))) {
      const existing = store.get(
        'persistentvolumeclaims',
        claim.metadata.namespace,
        claim.metadata.name,
      );
      if (existing) {
        if (existing.metadata.deletionTimestamp) {
          failures.push(`pvc ${claim.metadata.name} is being deleted`);
          this.waitingOnClaim.set(keyOf(existing), keyOf(set));
        }
        continue;
      }
      try {
        store.create('persistentvolumeclaims', claim);
        this.events.normal(
          set,
          'SuccessfulCreate',
          `create Claim ${claim.metadata.name} Pod ${pod.metadata.name} in StatefulSet ${set.metadata.name} success`,
        );
      } catch (e) {
        failures.push(
          `failed to create PVC ${claim.metadata.name}: ${
            (e as Error).message
          }`,
        );
        if (errorCode(e) !== 409) {
          this.events.warning(
            set,
            'FailedCreate',
            `create Claim ${claim.metadata.name} for Pod ${
              pod.metadata.name
            } in StatefulSet ${set.metadata.name} failed error: ${
              (e as Error).message
            }`,
          );
        }
      }
    }
    if (failures.length)
      throw new Requeue(
        failures.length === 1 ? failures[0] : `[${failures.join(', ')}]`,
      );
  }

  /** UpdatePodClaimForRetentionPolicy. */
  private applyRetentionPolicy(set: KubeObject, pod: KubeObject) {
    for (const { claim } of claimsFor(set, ordinalOf(pod))) {
      const existing = this.ctx.store.get(
        'persistentvolumeclaims',
        claim.metadata.namespace,
        claim.metadata.name,
      );
      if (!existing || claimOwnerUpToDate(existing, set, pod)) continue;
      const copy = structuredClone(existing);
      const refs = claimOwnerRefs(existing, set, pod);
      if (refs.length) copy.metadata.ownerReferences = refs;
      else delete copy.metadata.ownerReferences;
      this.ctx.store.update('persistentvolumeclaims', copy);
    }
  }

  private deletePod(set: KubeObject, pod: KubeObject) {
    try {
      this.ctx.store.delete('pods', pod.metadata.namespace, pod.metadata.name);
    } catch (e) {
      if (errorCode(e) === 404) return;
      this.events.warning(
        set,
        'FailedDelete',
        `delete Pod ${pod.metadata.name} in StatefulSet ${
          set.metadata.name
        } failed error: ${(e as Error).message}`,
      );
      throw e;
    }
    this.events.normal(
      set,
      'SuccessfulDelete',
      `delete Pod ${pod.metadata.name} in StatefulSet ${set.metadata.name} successful`,
    );
  }

  /** computeReplicaStatus + completeRollingUpdate; written only when it changed (inconsistentStatus). */
  private updateStatus(set: KubeObject, revisions: Revisions) {
    const fresh = this.ctx.store.get(
      SETS,
      set.metadata.namespace,
      set.metadata.name,
    );
    if (!fresh) return;
    let replicas = 0;
    let ready = 0;
    let available = 0;
    let current = 0;
    let updated = 0;
    for (const pod of this.ownedPods(fresh)) {
      replicas++;
      if (isRunningAndReady(pod)) {
        ready++;
        if (this.available(fresh, pod)) available++;
      }
      if (!pod.metadata.deletionTimestamp) {
        const revision = pod.metadata.labels?.[REVISION_LABEL];
        if (revision === revisions.current) current++;
        if (revision === revisions.update) updated++;
      }
    }
    let currentRevision = revisions.current;
    const desired = fresh.spec.replicas;
    if (
      fresh.spec.updateStrategy?.type !== 'OnDelete' &&
      updated === desired &&
      ready === desired &&
      replicas === desired
    ) {
      current = updated;
      currentRevision = revisions.update;
    }
    // Fields Kubernetes marks omitempty are left out when zero, as on the wire.
    const status: Record<string, unknown> = {
      ...(fresh.metadata.generation
        ? { observedGeneration: fresh.metadata.generation }
        : {}),
      replicas,
      ...(ready ? { readyReplicas: ready } : {}),
      ...(current ? { currentReplicas: current } : {}),
      ...(updated ? { updatedReplicas: updated } : {}),
      currentRevision,
      updateRevision: revisions.update,
      collisionCount: fresh.status?.collisionCount ?? 0,
      availableReplicas: available,
      ...(fresh.status?.conditions
        ? { conditions: fresh.status.conditions }
        : {}),
    };
    const old = fresh.status ?? {};
    if (
      Object.keys({ ...old, ...status }).every(
        k => JSON.stringify(old[k]) === JSON.stringify(status[k]),
      )
    )
      return;
    this.ctx.store.update(SETS, { ...fresh, status });
  }
}
