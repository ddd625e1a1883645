import type { V1Pod } from '@kubernetes/client-node';

/**
 * The names of the claims a pod references: those its
 * `persistentVolumeClaim` volumes name, and those of its generic ephemeral
 * volumes, which Kubernetes names `<pod>-<volume>`.
 */
export function claimNamesOfPod(pod: V1Pod): string[] {
  const names: string[] = [];
  for (const volume of pod.spec?.volumes ?? []) {
    const claim = volume.persistentVolumeClaim?.claimName;
    if (claim) names.push(claim);
    else if (volume.ephemeral && pod.metadata?.name)
      names.push(`${pod.metadata.name}-${volume.name}`);
  }
  return names;
}
