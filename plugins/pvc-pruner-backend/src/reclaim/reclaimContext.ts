import type { KubeGateway } from '../kubernetes';
import type { ReclaimContext, ReleasedVolumeFacts } from './releasedVolumeRule';

/**
 * Reads live what judges a reclaim beside the volume: the claim now at its
 * claimRef's name, and, for a volume without a CSI source, its StorageClass's
 * provisioner (a class that cannot be read counts as none).
 */
export async function readReclaimContext(
  gateway: KubeGateway,
  facts: ReleasedVolumeFacts | undefined,
): Promise<ReclaimContext> {
  if (!facts) return {};
  const [claim, storageClass] = await Promise.all([
    gateway.readClaim(facts.claim.namespace, facts.claim.name),
    !facts.csiDriver && facts.storageClass
      ? gateway.readStorageClass(facts.storageClass).catch(() => undefined)
      : undefined,
  ]);
  return { claim, classProvisioner: storageClass?.provisioner };
}
