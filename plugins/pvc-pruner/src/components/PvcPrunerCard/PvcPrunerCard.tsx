import { stringifyEntityRef } from '@backstage/catalog-model';
import { InfoCard, Progress } from '@backstage/core-components';
import { useEntity } from '@backstage/plugin-catalog-react';
import { usePermission } from '@backstage/plugin-permission-react';
import {
  pvcPrunerOrphansReadPermission,
  pvcPrunerPrunePermission,
} from 'backstage-plugin-pvc-pruner-common';
import { NotAllowedNotice } from '../NotAllowedNotice';
import { OrphanedVolumes } from '../OrphanedVolumes';

// The Kubernetes plugin reads it too; @backstage/plugin-kubernetes-common exports no constant for it.
const KUBERNETES_CLUSTER_ANNOTATION = 'backstage.io/kubernetes-cluster';

/**
 * Props of the pvc-pruner card.
 *
 * @public
 */
export interface PvcPrunerCardProps {
  /** The card's title; "Orphaned volumes" by default. */
  title?: string;
}

/**
 * The pvc-pruner card of the current entity: its StatefulSets' orphaned
 * claims per cluster, and pruning them when the user is allowed to.
 *
 * @public
 */
export function PvcPrunerCard(props: PvcPrunerCardProps) {
  const title = props.title ?? 'Orphaned volumes';
  const { entity } = useEntity();
  const entityRef = stringifyEntityRef(entity);
  const read = usePermission({
    permission: pvcPrunerOrphansReadPermission,
    resourceRef: entityRef,
  });
  const prune = usePermission({
    permission: pvcPrunerPrunePermission,
    resourceRef: entityRef,
  });

  if (read.loading) {
    return (
      <InfoCard title={title}>
        <Progress />
      </InfoCard>
    );
  }
  if (!read.allowed) {
    return (
      <InfoCard title={title}>
        <NotAllowedNotice entityRef={entityRef} />
      </InfoCard>
    );
  }
  let pruneDeniedReason: string | undefined;
  if (prune.loading) pruneDeniedReason = 'Checking whether you may prune…';
  else if (!prune.allowed) {
    pruneDeniedReason =
      "You don't own this entity, or you're not allowed to prune its volumes (pvc-pruner.prune).";
  }
  return (
    <OrphanedVolumes
      entityRef={entityRef}
      entityCluster={
        entity.metadata.annotations?.[KUBERNETES_CLUSTER_ANNOTATION] ||
        undefined
      }
      title={title}
      pruneDeniedReason={pruneDeniedReason}
    />
  );
}
