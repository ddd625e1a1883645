import { useState } from 'react';
import {
  Box,
  Button,
  Table,
  TableBody,
  TableCell,
  TableHead,
  TableRow,
  Typography,
} from '@material-ui/core';
import { Alert } from '@material-ui/lab';
import { useApi } from '@backstage/core-plugin-api';
import { Progress } from '@backstage/core-components';
import useAsyncRetry from 'react-use/esm/useAsyncRetry';
import {
  formatBytes,
  ReleasedVolume,
} from 'backstage-plugin-pvc-pruner-common';
import { pvcPrunerApiRef } from '../../api/PvcPrunerApi';
import { describeError } from '../../utils/errors';
import { formatAge, formatTime, plural } from '../../utils/format';
import { formatMonthly } from '../../utils/money';
import { EntityLink } from '../FleetTable';
import { ReclaimDialog } from '../ReclaimDialog';

/** Props of {@link ReleasedVolumesSection}. */
export interface ReleasedVolumesSectionProps {
  /** The fleet's currency, when it is priced. */
  currency?: string;
  /** Where an entity's page is. */
  entityPath: (entityRef: string) => string;
}

function ReclaimCell(props: {
  volume: ReleasedVolume;
  onReclaim: (volume: ReleasedVolume) => void;
}) {
  const { volume, onReclaim } = props;
  if (volume.canReclaim)
    return (
      <Button
        size="small"
        variant="outlined"
        color="secondary"
        onClick={() => onReclaim(volume)}
        aria-label={`Reclaim ${volume.name}`}
      >
        Reclaim…
      </Button>
    );
  return (
    <Typography variant="body2" color="textSecondary">
      {volume.reason}
    </Typography>
  );
}

/**
 * The fleet page's Released volumes: every PersistentVolume whose claim is
 * gone but whose disk is still billed (reclaim policy Retain), with its
 * size, class, cost, since when it is Released, and the claim and entity it
 * belonged to; Reclaim for each the user may reclaim.
 */
export function ReleasedVolumesSection(props: ReleasedVolumesSectionProps) {
  const { currency, entityPath } = props;
  const api = useApi(pvcPrunerApiRef);
  const listed = useAsyncRetry(() => api.listReleasedVolumes(), [api]);
  const [reclaiming, setReclaiming] = useState<ReleasedVolume>();

  let body;
  if (listed.error) {
    body = (
      <Alert severity="error">
        Could not list the Released volumes: {describeError(listed.error)}
      </Alert>
    );
  } else if (!listed.value) {
    body = <Progress />;
  } else {
    const { items, totals, truncated, errors } = listed.value;
    body = (
      <>
        {errors.map(e => (
          <Alert key={e.cluster} severity="error" style={{ marginBottom: 8 }}>
            Cluster {e.cluster} did not answer, so its volumes are not listed:{' '}
            {e.message}
          </Alert>
        ))}
        <Typography variant="body1">
          <strong>{plural(totals.volumes, 'Released volume')}</strong> ·{' '}
          <strong>{formatBytes(totals.bytes)}</strong>
          {currency && totals.monthlyCost !== undefined && (
            <> ({formatMonthly(totals.monthlyCost, currency)})</>
          )}{' '}
          still billed until reclaimed
        </Typography>
        {truncated && (
          <Typography variant="body2" color="textSecondary">
            Only the {items.length} largest are listed.
          </Typography>
        )}
        {items.length === 0 ? (
          <Typography variant="body2">None.</Typography>
        ) : (
          <Table size="small" aria-label="Released volumes">
            <TableHead>
              <TableRow>
                <TableCell>Volume</TableCell>
                <TableCell align="right">Size</TableCell>
                <TableCell>StorageClass</TableCell>
                {currency && <TableCell align="right">Monthly cost</TableCell>}
                <TableCell>Released since</TableCell>
                <TableCell>Claim</TableCell>
                <TableCell>Entity</TableCell>
                <TableCell />
              </TableRow>
            </TableHead>
            <TableBody>
              {items.map(v => (
                <TableRow key={`${v.cluster}/${v.uid}`}>
                  <TableCell>
                    {v.name}
                    <Typography variant="caption" display="block">
                      {v.cluster}
                    </Typography>
                  </TableCell>
                  <TableCell align="right">{formatBytes(v.bytes)}</TableCell>
                  <TableCell>{v.storageClass ?? '—'}</TableCell>
                  {currency && (
                    <TableCell align="right">
                      {v.monthlyCost !== undefined
                        ? formatMonthly(v.monthlyCost, currency)
                        : '—'}
                    </TableCell>
                  )}
                  <TableCell>
                    {v.releasedSince ? (
                      <span title={formatTime(v.releasedSince)}>
                        {formatAge(v.releasedSince)} ago
                      </span>
                    ) : (
                      'unknown'
                    )}
                  </TableCell>
                  <TableCell>
                    {v.claim.namespace}/{v.claim.name}
                    {v.statefulSet && (
                      <Typography variant="caption" display="block">
                        of StatefulSet {v.statefulSet.name}
                      </Typography>
                    )}
                  </TableCell>
                  <TableCell>
                    {v.entityRef ? (
                      <EntityLink
                        entityRef={v.entityRef}
                        to={entityPath(v.entityRef)}
                      />
                    ) : (
                      'Unowned'
                    )}
                  </TableCell>
                  <TableCell>
                    <ReclaimCell volume={v} onReclaim={setReclaiming} />
                  </TableCell>
                </TableRow>
              ))}
            </TableBody>
          </Table>
        )}
      </>
    );
  }
  return (
    <Box mt={4} component="section" aria-label="Released volumes">
      <Typography variant="h6" component="h3">
        Released volumes
      </Typography>
      <Typography variant="body2" color="textSecondary" paragraph>
        PersistentVolumes whose claim is gone but whose disk is kept (reclaim
        policy Retain). Reclaiming one sets its policy to Delete, and its
        provisioner deletes the disk. It needs pvc-pruner.volumes.reclaim on
        every entity its claim belonged to, or pvc-pruner.unowned.prune for one
        no entity can be traced to.
      </Typography>
      {body}
      {reclaiming && (
        <ReclaimDialog
          open
          volumes={[reclaiming]}
          entityRef={reclaiming.entityRef}
          onClose={() => {
            setReclaiming(undefined);
            listed.retry();
          }}
        />
      )}
    </Box>
  );
}
