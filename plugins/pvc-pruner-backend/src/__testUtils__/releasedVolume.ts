import type { KubeObject, KubeSim } from 'kube-sim';
import { PROVISIONED_BY } from '../reclaim/releasedVolumeRule';

/* Released volumes made by hand in a simulator without controllers, for the reclaim tests. */

const VOLUMES = 'persistentvolumes';

/** A Released volume of claim shop/`claim` (uid `claim-<name>`), dynamically provisioned unless told. */
export function releasedVolume(
  sim: KubeSim,
  name: string,
  options: {
    claim?: string;
    storage?: string;
    provisionedBy?: string | null;
  } = {},
): KubeObject {
  const created = sim.store.create(VOLUMES, {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: {
      name,
      annotations:
        options.provisionedBy === null
          ? {}
          : { [PROVISIONED_BY]: options.provisionedBy ?? 'ebs.csi.aws.com' },
    },
    spec: {
      capacity: { storage: options.storage ?? '10Gi' },
      accessModes: ['ReadWriteOnce'],
      persistentVolumeReclaimPolicy: 'Retain',
      storageClassName: 'premium-retain',
      claimRef: {
        kind: 'PersistentVolumeClaim',
        namespace: 'shop',
        name: options.claim ?? `data-${name}`,
        uid: `claim-${name}`,
      },
      csi: { driver: 'ebs.csi.aws.com', volumeHandle: `vol-${name}` },
    },
  } as unknown as KubeObject);
  const withStatus = structuredClone(created);
  withStatus.status = { phase: 'Released' };
  return sim.store.update(VOLUMES, withStatus);
}
