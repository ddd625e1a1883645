/*
 * The prune dialog alone, open with the snapshot choice, in Backstage's
 * light theme: the page test/demo/dialogScreenshot.ts bundles and
 * screenshots. The claims are fixtures shaped as GET /v1/orphans answers
 * them with pvcPruner.snapshots enabled; the dialog is the card's own.
 */
import { createRoot } from 'react-dom/client';
import CssBaseline from '@material-ui/core/CssBaseline';
import { UnifiedThemeProvider, themes } from '@backstage/theme';
import type {
  OrphanedPvc,
  StatefulSetOrphans,
} from 'backstage-plugin-pvc-pruner-common';
import { PruneDialog } from '../../plugins/pvc-pruner/src/components/PruneDialog';

const GiB = 2 ** 30;

function orphan(
  ordinal: number,
  plan: OrphanedPvc['snapshotPlan'],
  reclaimPolicy = 'Delete',
): OrphanedPvc {
  const name = `data-orders-db-${ordinal}`;
  return {
    name,
    uid: `uid-${name}`,
    resourceVersion: '1',
    ordinal,
    template: 'data',
    phase: 'Bound',
    requested: '20Gi',
    requestedBytes: 20 * GiB,
    capacity: '20Gi',
    capacityBytes: 20 * GiB,
    storageClassName: 'standard',
    volume: {
      name: `pv-shop-${name}`,
      reclaimPolicy,
      phase: 'Bound',
      retained: reclaimPolicy === 'Retain',
      csiDriver: 'sim.csi.k8s.io',
    },
    reattachesAtReplicas: ordinal + 1,
    snapshotPlan: plan,
  };
}

const withClass = {
  kind: 'class',
  volumeSnapshotClass: 'sim-snapshots',
} as const;

const statefulSet = {
  name: 'orders-db',
  namespace: 'shop',
  orphans: [
    orphan(3, withClass),
    orphan(4, withClass),
    orphan(5, {
      kind: 'none',
      reason:
        'no VolumeSnapshotClass is marked default for CSI driver sim.csi.k8s.io (annotate one snapshot.storage.kubernetes.io/is-default-class: "true", or map StorageClass standard in pvcPruner.snapshots.storageClasses)',
    }),
    orphan(
      6,
      {
        kind: 'not-needed',
        reason:
          'its volume pv-shop-data-orders-db-6 is kept when the claim is deleted (reclaim policy Retain), so it needs no snapshot',
      },
      'Retain',
    ),
  ],
} as StatefulSetOrphans;

createRoot(document.getElementById('root')!).render(
  <UnifiedThemeProvider theme={themes.light}>
    <CssBaseline />
    <PruneDialog
      open
      dryRun={false}
      cluster="demo"
      statefulSet={statefulSet}
      snapshots={{ enabled: true, retentionDays: 7, required: true }}
      onClose={() => {}}
      onConfirm={async () => {}}
    />
  </UnifiedThemeProvider>,
);
