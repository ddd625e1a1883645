import { randomBytes } from 'node:crypto';
import { KubeObject, StoreEvent } from '../types';
import { Controller, ControllerContext, keyOf, splitKey } from './Controller';
import { EventRecorder } from './EventRecorder';
import {
  claimNames,
  condition,
  NODE_IP,
  NODE_NAME,
  now,
  tolerate,
} from './util';

export const SELECTED_NODE_ANNOTATION = 'volume.kubernetes.io/selected-node';

const UNBOUND_IMMEDIATE =
  '0/1 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.';

/**
 * The scheduler and the kubelet of the simulator's single node. The
 * scheduler binds a pod to the node once its claims are bound (asking for
 * WaitForFirstConsumer volumes on the way); the kubelet starts a bound pod
 * after a start-up delay and, when the pod is deleted, stops it after its
 * grace period and removes it with gracePeriodSeconds 0.
 */
export class PodLifecycleController extends Controller {
  readonly name = 'pod-lifecycle';
  private readonly podsByClaim = this.index('pods', pod =>
    claimNames(pod).map(c => `${pod.metadata.namespace}/${c}`),
  );
  private nextIp = 2;
  private readonly scheduler = new EventRecorder(
    this.ctx.store,
    'default-scheduler',
  );
  private readonly kubelet = new EventRecorder(
    this.ctx.store,
    'kubelet',
    NODE_NAME,
  );
  /** Pods whose containers the kubelet has been told to stop. */
  private readonly stopping = new Set<string>();

  constructor(ctx: ControllerContext, private readonly startupSeconds: number) {
    super(ctx);
  }

  protected initialKeys() {
    return this.ctx.store.list('pods').items.map(keyOf);
  }

  protected keysFor(event: StoreEvent): string[] {
    if (event.resource === 'pods') {
      if (event.type === 'DELETED') {
        this.forget(event.object.metadata.uid);
        this.stopping.delete(event.object.metadata.uid);
        return [];
      }
      return [keyOf(event.object)];
    }
    if (event.resource === 'persistentvolumeclaims')
      return this.podsByClaim.get(keyOf(event.object));
    return [];
  }

  protected reconcile(key: string) {
    const [namespace, name] = splitKey(key);
    const pod = this.ctx.store.get('pods', namespace, name);
    if (!pod) return;
    if (pod.metadata.deletionTimestamp) this.stopContainers(key, pod);
    else if (
      pod.status?.phase === 'Succeeded' ||
      pod.status?.phase === 'Failed'
    )
      return;
    else if (!pod.spec.nodeName) this.bindToNode(pod);
    else if (pod.status?.phase === 'Pending') this.startContainers(key, pod);
  }

  /** Why the volume binding plugin keeps the pod off the node, if it does. */
  private volumeProblem(pod: KubeObject): string | undefined {
    const store = this.ctx.store;
    let waiting: string | undefined;
    for (const claimName of claimNames(pod)) {
      const claim = store.get(
        'persistentvolumeclaims',
        pod.metadata.namespace,
        claimName,
      );
      if (!claim) return `persistentvolumeclaim "${claimName}" not found`;
      if (claim.metadata.deletionTimestamp)
        return `persistentvolumeclaim "${claimName}" is being deleted`;
      if (claim.status?.phase === 'Bound') continue;
      const sc =
        claim.spec.storageClassName &&
        store.get(
          'storage.k8s.io/storageclasses',
          undefined,
          claim.spec.storageClassName,
        );
      if (!sc || sc.volumeBindingMode !== 'WaitForFirstConsumer')
        return UNBOUND_IMMEDIATE;
      if (
        claim.metadata.annotations?.[SELECTED_NODE_ANNOTATION] !== NODE_NAME
      ) {
        const copy = structuredClone(claim);
        copy.metadata.annotations = {
          ...copy.metadata.annotations,
          [SELECTED_NODE_ANNOTATION]: NODE_NAME,
        };
        store.update('persistentvolumeclaims', copy);
      }
      waiting = 'waiting for volume binding';
    }
    return waiting;
  }

  private bindToNode(pod: KubeObject) {
    if (
      pod.spec.schedulerName &&
      pod.spec.schedulerName !== 'default-scheduler'
    )
      return;
    const problem = this.volumeProblem(pod);
    const copy = structuredClone(pod);
    const others = (copy.status?.conditions ?? []).filter(
      (c: any) => c.type !== 'PodScheduled',
    );
    if (problem === 'waiting for volume binding') return;
    if (problem) {
      const current = pod.status?.conditions?.find(
        (c: any) => c.type === 'PodScheduled',
      );
      if (current?.message === problem) return;
      copy.status = {
        ...copy.status,
        phase: 'Pending',
        conditions: [
          ...others,
          condition('PodScheduled', 'False', now(), {
            reason: 'Unschedulable',
            message: problem,
          }),
        ],
      };
    } else {
      copy.spec.nodeName = NODE_NAME;
      copy.status = {
        ...copy.status,
        phase: 'Pending',
        conditions: [...others, condition('PodScheduled', 'True', now())],
      };
    }
    const updated = this.ctx.store.update('pods', copy);
    if (problem) this.scheduler.warning(updated, 'FailedScheduling', problem);
    else
      this.scheduler.normal(
        updated,
        'Scheduled',
        `Successfully assigned ${pod.metadata.namespace}/${pod.metadata.name} to ${NODE_NAME}`,
      );
  }

  /** Kubelet start-up: volumes mounted (claims bound), then Running and Ready after the start-up delay. */
  private startContainers(key: string, pod: KubeObject) {
    const store = this.ctx.store;
    const mounted = claimNames(pod).every(c => {
      const claim = store.get(
        'persistentvolumeclaims',
        pod.metadata.namespace,
        c,
      );
      return (
        claim?.status?.phase === 'Bound' && !claim.metadata.deletionTimestamp
      );
    });
    if (
      !mounted ||
      !this.elapsed(pod.metadata.uid, 'start', this.startupSeconds, key)
    )
      return;
    const at = now();
    const ip = `10.244.${(this.nextIp >> 8) & 255}.${this.nextIp & 255}`;
    this.nextIp = this.nextIp >= 65533 ? 2 : this.nextIp + 1;
    const scheduled = pod.status?.conditions?.find(
      (c: any) => c.type === 'PodScheduled',
    );
    const copy = structuredClone(pod);
    copy.status = {
      phase: 'Running',
      conditions: [
        condition('PodReadyToStartContainers', 'True', at),
        condition('Initialized', 'True', at),
        condition('Ready', 'True', at),
        condition('ContainersReady', 'True', at),
        scheduled ?? condition('PodScheduled', 'True', at),
      ],
      hostIP: NODE_IP,
      hostIPs: [{ ip: NODE_IP }],
      podIP: ip,
      podIPs: [{ ip }],
      startTime: at,
      containerStatuses: (pod.spec.containers ?? []).map((c: any) =>
        containerStatus(c, { running: { startedAt: at } }, true),
      ),
      qosClass: qosClass(pod),
    };
    const started = store.update('pods', copy);
    for (const container of pod.spec.containers ?? [])
      this.recordContainerStart(started, container);
  }

  /** kuberuntime's startContainer events: the image, then Created and Started. */
  private recordContainerStart(pod: KubeObject, container: any) {
    const options = { fieldPath: `spec.containers{${container.name}}` };
    const image = container.image ?? '';
    if (pullPolicyOf(container) === 'Always') {
      this.kubelet.normal(pod, 'Pulling', `Pulling image "${image}"`, options);
      const took = `${this.startupSeconds}s`;
      this.kubelet.normal(
        pod,
        'Pulled',
        `Successfully pulled image "${image}" in ${took} (${took} including waiting)`,
        options,
      );
    } else {
      this.kubelet.normal(
        pod,
        'Pulled',
        `Container image "${image}" already present on machine`,
        options,
      );
    }
    this.kubelet.normal(
      pod,
      'Created',
      `Created container ${container.name}`,
      options,
    );
    this.kubelet.normal(
      pod,
      'Started',
      `Started container ${container.name}`,
      options,
    );
  }

  /** killContainer's event, once per pod being stopped. */
  private recordContainerStops(pod: KubeObject) {
    if (this.stopping.has(pod.metadata.uid)) return;
    this.stopping.add(pod.metadata.uid);
    for (const status of pod.status?.containerStatuses ?? []) {
      if (!status.state?.running) continue;
      this.kubelet.normal(pod, 'Killing', `Stopping container ${status.name}`, {
        fieldPath: `spec.containers{${status.name}}`,
      });
    }
  }

  /** Kubelet shutdown: after the grace period the containers have stopped and the pod is removed. */
  private stopContainers(key: string, pod: KubeObject) {
    const grace = pod.metadata.deletionGracePeriodSeconds ?? 0;
    if (!pod.spec.nodeName || grace <= 0) return;
    const running = pod.status?.phase === 'Running';
    if (running) this.recordContainerStops(pod);
    // Only running containers take their grace period to stop.
    if (
      running &&
      !this.elapsed(pod.metadata.uid, `terminate-${grace}`, grace, key)
    )
      return;
    const store = this.ctx.store;
    if (running) {
      const at = now();
      const copy = structuredClone(pod);
      const done = { reason: 'PodCompleted' };
      copy.status = {
        ...copy.status,
        phase: 'Succeeded',
        conditions: [
          condition('PodReadyToStartContainers', 'False', at),
          condition('Initialized', 'True', at, done),
          condition('Ready', 'False', at, done),
          condition('ContainersReady', 'False', at, done),
          ...(copy.status.conditions ?? []).filter(
            (c: any) => c.type === 'PodScheduled',
          ),
        ],
        containerStatuses: (copy.status.containerStatuses ?? []).map(
          (s: any) => ({
            ...s,
            ready: false,
            started: false,
            state: {
              terminated: {
                exitCode: 0,
                reason: 'Completed',
                startedAt: s.state?.running?.startedAt ?? at,
                finishedAt: at,
                containerID: s.containerID,
              },
            },
          }),
        ),
      };
      store.update('pods', copy);
    }
    tolerate([404, 409], () =>
      store.delete('pods', pod.metadata.namespace, pod.metadata.name, {
        gracePeriodSeconds: 0,
        preconditions: { uid: pod.metadata.uid },
      }),
    );
  }
}

/** The API server's default: Always for an untagged or :latest image, else IfNotPresent. */
function pullPolicyOf(container: any): string {
  if (container.imagePullPolicy) return container.imagePullPolicy;
  const last = (container.image ?? '').split('/').pop() ?? '';
  if (last.includes('@')) return 'IfNotPresent';
  const tag = last.includes(':') ? last.slice(last.lastIndexOf(':') + 1) : '';
  return tag === '' || tag === 'latest' ? 'Always' : 'IfNotPresent';
}

function containerStatus(container: any, state: unknown, ready: boolean) {
  const image = normalizeImage(container.image ?? '');
  return {
    containerID: `containerd://${randomBytes(32).toString('hex')}`,
    image,
    imageID: `${image.replace(/:[^:/]+$/, '')}@sha256:${randomBytes(
      32,
    ).toString('hex')}`,
    lastState: {},
    name: container.name,
    ready,
    restartCount: 0,
    started: ready,
    state,
  };
}

/** 'nginx' → 'docker.io/library/nginx:latest', as the container runtime reports it. */
function normalizeImage(image: string) {
  const [first, ...rest] = image.split('/');
  const hasRegistry =
    rest.length > 0 &&
    (first.includes('.') || first.includes(':') || first === 'localhost');
  let name = hasRegistry
    ? image
    : `docker.io/${rest.length ? image : `library/${image}`}`;
  if (!/[:@][^/]*$/.test(name.split('/').pop()!)) name += ':latest';
  return name;
}

function qosClass(pod: KubeObject) {
  const containers: any[] = pod.spec.containers ?? [];
  const has = (c: any, kind: 'requests' | 'limits') =>
    Object.keys(c.resources?.[kind] ?? {}).length > 0;
  if (!containers.some(c => has(c, 'requests') || has(c, 'limits')))
    return 'BestEffort';
  const guaranteed = containers.every(c =>
    ['cpu', 'memory'].every(
      r =>
        c.resources?.limits?.[r] !== undefined &&
        (c.resources?.requests?.[r] ?? c.resources.limits[r]) ===
          c.resources.limits[r],
    ),
  );
  return guaranteed ? 'Guaranteed' : 'Burstable';
}
