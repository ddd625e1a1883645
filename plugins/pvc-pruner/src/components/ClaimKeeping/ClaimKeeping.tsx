import { ReactNode, useCallback, useState } from 'react';
import { Box, Typography } from '@material-ui/core';
import { Alert } from '@material-ui/lab';
import { useApi } from '@backstage/core-plugin-api';
import {
  AutoPruneStatus,
  OrphanedPvc,
  StatefulSetOrphans,
} from 'backstage-plugin-pvc-pruner-common';
import { pvcPrunerApiRef } from '../../api/PvcPrunerApi';
import { describeError } from '../../utils/errors';
import { ClaimAutoPrune } from '../ClaimAutoPrune';
import { KeepClaimDialog } from '../KeepClaimDialog';

/** Renders the automatic-pruning cell of one orphan. */
export type AutoPruneCell = (pvc: OrphanedPvc) => ReactNode;

/** Props of {@link ClaimKeeping}. */
export interface ClaimKeepingProps {
  entityRef?: string;
  cluster: string;
  statefulSet: StatefulSetOrphans;
  /** The entity's automatic pruning, as the orphans answer says. */
  autoPrune?: AutoPruneStatus;
  /** Why the user may not keep claims (they need pvc-pruner.prune); undefined when they may. */
  deniedReason?: string;
  /** A claim was kept or no longer is: reload the orphans. */
  onChanged?: () => void;
  /** The orphan table, given the cell to show per claim, or nothing when the entity has not opted in. */
  children: (cell: AutoPruneCell | undefined) => ReactNode;
}

/**
 * Keeping a StatefulSet's orphans from automatic pruning, on an opted-in
 * entity's card: why the StatefulSet is not automated, if it is not; each
 * claim's eligibility or keep (through `children`'s table), the keep
 * dialog, and what went wrong when a keep could not be ended.
 */
export function ClaimKeeping(props: ClaimKeepingProps) {
  const {
    entityRef,
    cluster,
    statefulSet: sts,
    deniedReason,
    onChanged,
  } = props;
  const api = useApi(pvcPrunerApiRef);
  const [keeping, setKeeping] = useState<OrphanedPvc>();
  const [unkeeping, setUnkeeping] = useState<string>();
  const [error, setError] = useState<{ claim: string; error: Error }>();
  const optedIn = props.autoPrune?.state === 'opted-in' && Boolean(entityRef);
  const automated = sts.autoPrune?.automated !== false;

  const unkeep = useCallback(
    async (pvc: OrphanedPvc) => {
      setUnkeeping(pvc.uid);
      setError(undefined);
      try {
        await api.unkeepClaim({ uid: pvc.uid, entityRef: entityRef!, cluster });
        onChanged?.();
      } catch (e) {
        setError({ claim: pvc.name, error: e as Error });
      } finally {
        setUnkeeping(undefined);
      }
    },
    [api, entityRef, cluster, onChanged],
  );
  const cell = useCallback<AutoPruneCell>(
    pvc => (
      <ClaimAutoPrune
        pvc={pvc}
        automated={automated}
        deniedReason={deniedReason}
        busy={unkeeping === pvc.uid}
        onKeep={setKeeping}
        onUnkeep={unkeep}
      />
    ),
    [automated, deniedReason, unkeeping, unkeep],
  );

  if (!optedIn) return <>{props.children(undefined)}</>;
  const anyKept = sts.orphans.some(o => o.keep);
  return (
    <>
      {!automated && (
        <Box mb={1}>
          <Typography variant="body2" color="textSecondary">
            Automatic pruning does not act on {sts.name}
            {sts.autoPrune?.reason ? `: ${sts.autoPrune.reason}` : '.'}
          </Typography>
        </Box>
      )}
      {error && (
        <Box mb={1}>
          <Alert
            severity="error"
            role="alert"
            onClose={() => setError(undefined)}
          >
            Could not stop keeping {error.claim}: {describeError(error.error)}
          </Alert>
        </Box>
      )}
      {props.children(automated || anyKept ? cell : undefined)}
      <KeepClaimDialog
        entityRef={entityRef!}
        cluster={cluster}
        namespace={sts.namespace}
        statefulSet={sts.name}
        claim={keeping}
        onClose={() => setKeeping(undefined)}
        onKept={() => {
          setKeeping(undefined);
          onChanged?.();
        }}
      />
    </>
  );
}
