import { ObjectStore, timestamp } from '../store';
import { KubeObject, OwnerReference } from '../types';

/** The simulator's only node. */
export const NODE_NAME = 'sim-node-1';
export const NODE_IP = '10.89.0.2';

export const now = () => timestamp();

export function hasFinalizer(obj: KubeObject, finalizer: string) {
  return obj.metadata.finalizers?.includes(finalizer) ?? false;
}

/** Removes a finalizer (the store completes a pending deletion when none remain). */
export function removeFinalizer(
  store: ObjectStore,
  resource: string,
  obj: KubeObject,
  finalizer: string,
) {
  const copy = structuredClone(obj);
  copy.metadata.finalizers = (copy.metadata.finalizers ?? []).filter(
    f => f !== finalizer,
  );
  return store.update(resource, copy);
}

/** An ownerReference to obj; controller refs also block the owner's foreground deletion. */
export function ownerRefTo(
  obj: KubeObject,
  controller: boolean,
): OwnerReference {
  return {
    apiVersion: obj.apiVersion,
    kind: obj.kind,
    name: obj.metadata.name,
    uid: obj.metadata.uid,
    ...(controller ? { controller: true, blockOwnerDeletion: true } : {}),
  };
}

export function controllerOf(obj: KubeObject): OwnerReference | undefined {
  return obj.metadata.ownerReferences?.find(ref => ref.controller);
}

/** Names of the PVCs a pod mounts. */
export function claimNames(pod: KubeObject): string[] {
  return (pod.spec?.volumes ?? []).flatMap((v: any) =>
    v?.persistentVolumeClaim?.claimName
      ? [v.persistentVolumeClaim.claimName as string]
      : [],
  );
}

export function isPodReady(pod: KubeObject) {
  return (pod.status?.conditions ?? []).some(
    (c: any) => c.type === 'Ready' && c.status === 'True',
  );
}

export function isRunningAndReady(pod: KubeObject) {
  return pod.status?.phase === 'Running' && isPodReady(pod);
}

const BINARY: Record<string, number> = {
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};
const DECIMAL: Record<string, number> = {
  m: 1e-3,
  '': 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
};

/** A resource.Quantity as a number (bytes for storage); NaN when malformed. */
export function parseQuantity(value: unknown): number {
  if (typeof value === 'number') return value;
  const m =
    typeof value === 'string'
      ? value.match(
          /^\+?(\d+(?:\.\d*)?|\.\d+)(?:([eE][-+]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E))?$/,
        )
      : null;
  if (!m) return NaN;
  const base = Number(m[1]);
  if (m[2]) return base * 10 ** Number(m[2].slice(1));
  const suffix = m[3] ?? '';
  return base * (BINARY[suffix] ?? DECIMAL[suffix]);
}

/** Status condition with Kubernetes' field set. */
export function condition(
  type: string,
  status: 'True' | 'False',
  at: string,
  extra: Record<string, string> = {},
) {
  return {
    type,
    status,
    lastProbeTime: null,
    lastTransitionTime: at,
    ...extra,
  };
}

export function errorCode(e: unknown): number | undefined {
  return (e as { code?: number }).code;
}

/** Runs a write, treating the listed API error codes as "already done". */
export function tolerate<T>(codes: number[], write: () => T): T | undefined {
  try {
    return write();
  } catch (e) {
    if (codes.includes(errorCode(e) ?? 0)) return undefined;
    throw e;
  }
}
