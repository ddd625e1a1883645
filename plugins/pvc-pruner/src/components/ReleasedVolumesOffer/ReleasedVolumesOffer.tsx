import { useEffect, useState } from 'react';
import { Box, Button, Typography } from '@material-ui/core';
import { Alert } from '@material-ui/lab';
import { useApi } from '@backstage/core-plugin-api';
import useAsyncRetry from 'react-use/esm/useAsyncRetry';
import { formatBytes } from 'backstage-plugin-pvc-pruner-common';
import { pvcPrunerApiRef } from '../../api/PvcPrunerApi';
import { describeError } from '../../utils/errors';
import { plural } from '../../utils/format';
import { ReclaimDialog } from '../ReclaimDialog';

/** Lists read again while some of the prune's volumes are not listed yet, this far apart. */
const MAX_RETRIES = 3;
const RETRY_MS = 1000;

/** Props of {@link ReleasedVolumesOffer}. */
export interface ReleasedVolumesOfferProps {
  /** The entity the prune went through: the volumes are those traced to it. */
  entityRef: string;
  /** The volumes a prune left Released (their claims deleted, their policy Retain). */
  volumeNames: string[];
}

/**
 * After a prune of claims whose volumes are Retain: offers "Also reclaim
 * these volumes" to a user who may (pvc-pruner.volumes.reclaim on the entity
 * and every claimant); says why not to one who may not, and that a
 * statically provisioned volume cannot be reclaimed by deleting its object.
 */
export function ReleasedVolumesOffer(props: ReleasedVolumesOfferProps) {
  const { entityRef, volumeNames } = props;
  const api = useApi(pvcPrunerApiRef);
  const [open, setOpen] = useState(false);
  const listed = useAsyncRetry(
    () => api.listReleasedVolumes(entityRef),
    [api, entityRef],
  );
  // The list is read from the watch cache, which may see a volume Released a moment after the prune did.
  const [retries, setRetries] = useState(0);
  const found = (listed.value?.items ?? []).filter(v =>
    volumeNames.includes(v.name),
  ).length;
  const { retry } = listed;
  useEffect(() => {
    if (!listed.value || found >= volumeNames.length) return undefined;
    if (retries >= MAX_RETRIES) return undefined;
    const timer = setTimeout(() => {
      setRetries(n => n + 1);
      retry();
    }, RETRY_MS);
    return () => clearTimeout(timer);
  }, [listed.value, found, volumeNames.length, retries, retry]);
  if (listed.error)
    return (
      <Alert severity="warning">
        Could not list the Released volumes: {describeError(listed.error)}
      </Alert>
    );
  const volumes = (listed.value?.items ?? []).filter(v =>
    volumeNames.includes(v.name),
  );
  if (volumes.length === 0) return null;
  const offered = volumes.filter(v => v.canReclaim);
  const notOffered = volumes.filter(v => !v.canReclaim);
  const bytes = offered.reduce((n, v) => n + v.bytes, 0);
  return (
    <Box mt={2} component="section" aria-label="Released volumes">
      {offered.length > 0 && (
        <Box display="flex" alignItems="center" gridGap={16} flexWrap="wrap">
          <Typography variant="body2">
            {plural(offered.length, 'Released volume')} ({formatBytes(bytes)})
            still billed: their disks are kept until their PersistentVolumes are
            deleted.
          </Typography>
          <Button
            variant="outlined"
            color="secondary"
            onClick={() => setOpen(true)}
          >
            Also reclaim these volumes
          </Button>
        </Box>
      )}
      {notOffered.map(v => (
        <Typography key={v.uid} variant="body2" color="textSecondary">
          {v.name} is not offered: {v.reason}.
        </Typography>
      ))}
      {open && (
        <ReclaimDialog
          open
          onClose={() => {
            setOpen(false);
            listed.retry();
          }}
          volumes={offered}
          entityRef={entityRef}
        />
      )}
    </Box>
  );
}
