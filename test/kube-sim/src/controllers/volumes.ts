import { randomBytes } from 'node:crypto';
import { KubeObject } from '../types';
import { now } from './util';

export const ANN_BIND_COMPLETED = 'pv.kubernetes.io/bind-completed';
export const ANN_BOUND_BY_CONTROLLER = 'pv.kubernetes.io/bound-by-controller';
export const ANN_PROVISIONED_BY = 'pv.kubernetes.io/provisioned-by';
export const ANN_STORAGE_PROVISIONER =
  'volume.kubernetes.io/storage-provisioner';
export const ANN_BETA_STORAGE_PROVISIONER =
  'volume.beta.kubernetes.io/storage-provisioner';
/** Added by the CSI external-provisioner to volumes it must delete (HonorPVReclaimPolicy). */
export const PROVISIONER_FINALIZER =
  'external-provisioner.volume.kubernetes.io/finalizer';
export const NO_PROVISIONER = 'kubernetes.io/no-provisioner';

/** Provisioners that make hostPath volumes rather than CSI ones. */
const HOST_PATH_PROVISIONERS = new Set([
  'k8s.io/minikube-hostpath',
  'rancher.io/local-path',
  'microk8s.io/hostpath',
  'docker.io/hostpath',
]);

/** IsVolumeBoundToClaim: claimRef names the claim and, if it has a uid, the same uid. */
export function volumeBoundToClaim(pv: KubeObject, claim: KubeObject) {
  const ref = pv.spec?.claimRef;
  return (
    !!ref &&
    ref.name === claim.metadata.name &&
    (ref.namespace ?? '') === claim.metadata.namespace &&
    (!ref.uid || ref.uid === claim.metadata.uid)
  );
}

export function claimRefTo(claim: KubeObject) {
  return {
    kind: 'PersistentVolumeClaim',
    namespace: claim.metadata.namespace,
    name: claim.metadata.name,
    uid: claim.metadata.uid,
    apiVersion: 'v1',
    resourceVersion: claim.metadata.resourceVersion,
  };
}

export function withPhase(
  pv: KubeObject,
  phase: string,
  message?: string,
): KubeObject {
  return {
    ...pv,
    status: {
      phase,
      ...(message ? { message } : {}),
      lastPhaseTransitionTime: now(),
    },
  };
}

/** The PersistentVolume an external provisioner creates for a claim. */
export function provisionedVolume(
  claim: KubeObject,
  storageClass: KubeObject,
  /** Annotations recording the snapshot a restored volume's data came from. */
  restoredFrom: Record<string, string> = {},
): KubeObject {
  const provisioner: string = storageClass.provisioner;
  const reclaimPolicy = storageClass.reclaimPolicy ?? 'Delete';
  const name = `pvc-${claim.metadata.uid}`;
  const csi =
    !HOST_PATH_PROVISIONERS.has(provisioner) &&
    !provisioner.startsWith('kubernetes.io/');
  const source = csi
    ? {
        csi: {
          driver: provisioner,
          volumeHandle: `vol-${randomBytes(8).toString('hex')}`,
          fsType:
            storageClass.parameters?.['csi.storage.k8s.io/fstype'] ?? 'ext4',
          volumeAttributes: {
            'storage.kubernetes.io/csiProvisionerIdentity': `${Date.now()}-8081-${provisioner}`,
          },
        },
      }
    : {
        hostPath: {
          path: `/tmp/hostpath-provisioner/${claim.metadata.namespace}/${claim.metadata.name}`,
          type: '',
        },
      };
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: {
      name,
      annotations: { [ANN_PROVISIONED_BY]: provisioner, ...restoredFrom },
      ...(csi && reclaimPolicy === 'Delete'
        ? { finalizers: [PROVISIONER_FINALIZER] }
        : {}),
    } as unknown as KubeObject['metadata'],
    spec: {
      accessModes: [...claim.spec.accessModes],
      capacity: { storage: claim.spec.resources.requests.storage },
      claimRef: claimRefTo(claim),
      persistentVolumeReclaimPolicy: reclaimPolicy,
      storageClassName: storageClass.metadata.name,
      volumeMode: claim.spec.volumeMode ?? 'Filesystem',
      ...(storageClass.mountOptions
        ? { mountOptions: [...storageClass.mountOptions] }
        : {}),
      ...source,
    },
  };
}
