import { DEFAULT_CLASS_ANNOTATION } from '../admission';
import { SimClock } from '../clock';
import { ObjectStore } from '../store';
import { KubeObject, StoreEvent } from '../types';
import {
  ControllerOptions,
  RunningControllers,
  startControllers,
} from './index';
import { manifest } from '../manifests';
import { SnapshotBehaviours } from '../snapshots/SnapshotBehaviours';

export { manifest, pod, pvc, statefulSet } from '../manifests';

export interface Harness {
  store: ObjectStore;
  controllers: RunningControllers;
  /** Every committed change, in order. */
  log: StoreEvent[];
  /** Warnings the controllers emitted (unexpected reconcile errors). */
  warnings: string[];
  /** Stops everything; throws if a controller warned, so an afterEach fails the test. */
  stop(): void;
}

/** A store with namespace 'default' and default class 'standard' (CSI, Delete, Immediate), plus controllers on a fast clock. */
export function startHarness(
  options: ControllerOptions & {
    timeFactor?: number;
    snapshotBehaviours?: SnapshotBehaviours;
  } = {},
): Harness {
  const store = new ObjectStore();
  const clock = new SimClock(options.timeFactor ?? 0.001);
  store.create(
    'namespaces',
    manifest({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'default' },
    }),
  );
  store.create(
    'storage.k8s.io/storageclasses',
    manifest({
      apiVersion: 'storage.k8s.io/v1',
      kind: 'StorageClass',
      metadata: {
        name: 'standard',
        annotations: { [DEFAULT_CLASS_ANNOTATION]: 'true' },
      },
      provisioner: 'ebs.csi.aws.com',
      reclaimPolicy: 'Delete',
      volumeBindingMode: 'Immediate',
    }),
  );
  const log: StoreEvent[] = [];
  const unsubscribe = store.subscribe(event => log.push(event));
  const warnings: string[] = [];
  const onWarning = (warning: Error) => warnings.push(warning.message);
  process.on('warning', onWarning);
  const controllers = startControllers({
    store,
    clock,
    options,
    snapshotBehaviours: options.snapshotBehaviours,
  });
  return {
    store,
    controllers,
    log,
    warnings,
    stop() {
      controllers.stop();
      clock.stop();
      unsubscribe();
      process.off('warning', onWarning);
      if (warnings.length)
        throw new Error(`controllers warned:\n${warnings.join('\n')}`);
    },
  };
}

/** Polls until check returns something truthy. */
export async function waitFor<T>(
  check: () => T | undefined | null | false,
  what: string,
  timeoutMs = 5000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise(resolve => setTimeout(resolve, 2));
  }
}

export const sleep = (ms: number) =>
  new Promise(resolve => setTimeout(resolve, ms));

/** A StorageClass; the fields given (provisioner, reclaimPolicy, volumeBindingMode, ...) go beside metadata. */
export function storageClass(
  name: string,
  fields: Record<string, unknown>,
): KubeObject {
  return manifest({
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name },
    ...fields,
  });
}

/** Changes a stored object's spec through an update, as kubectl edit would. */
export function updateSpec(
  store: ObjectStore,
  resource: string,
  name: string,
  change: (spec: any) => void,
  namespace = 'default',
) {
  const copy = structuredClone(store.require(resource, namespace, name));
  change(copy.spec);
  return store.update(resource, copy);
}

/** Index in the log of the first event matching. */
export function firstIndex(
  log: StoreEvent[],
  match: (e: StoreEvent) => boolean,
) {
  return log.findIndex(match);
}

export const isEvent =
  (resource: string, type: StoreEvent['type'], name: string) =>
  (e: StoreEvent) =>
    e.resource === resource &&
    e.type === type &&
    e.object.metadata.name === name;

/** The first change that marked the object for deletion. */
export const markedDeleted =
  (resource: string, name: string) => (e: StoreEvent) =>
    e.resource === resource &&
    e.object.metadata.name === name &&
    !!e.object.metadata.deletionTimestamp &&
    !e.previous?.metadata.deletionTimestamp;

/** The events recorded about an object, oldest first, as `kubectl describe` lists them. */
export function eventsAbout(store: ObjectStore, obj: KubeObject) {
  return store
    .list('events', { namespace: obj.metadata.namespace })
    .items.filter(e => e.involvedObject.uid === obj.metadata.uid)
    .map(e => ({
      type: e.type,
      reason: e.reason,
      from: e.source.component,
      message: e.message,
      ...(e.involvedObject.fieldPath
        ? { fieldPath: e.involvedObject.fieldPath }
        : {}),
    }));
}
