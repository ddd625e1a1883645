import {
  Table,
  TableBody,
  TableCell,
  TableContainer,
  TableHead,
  TableRow,
  makeStyles,
} from '@material-ui/core';
import { formatBytes } from 'backstage-plugin-pvc-pruner-common';
import { PvcProgress } from '../../state/pruneProgressReducer';
import { PvcStateLabel } from '../PvcStateLabel';

const useStyles = makeStyles({
  container: { maxHeight: 360 },
  nowrap: { whiteSpace: 'nowrap' },
});

/** Props of {@link PvcProgressTable}. */
export interface PvcProgressTableProps {
  pvcs: PvcProgress[];
  dryRun: boolean;
}

function fate(pvc: PvcProgress, dryRun: boolean): string {
  const volume = pvc.volume;
  if (!volume) return pvc.state === 'deleted' ? 'no bound volume' : '';
  const policy = volume.reclaimPolicy ?? 'unknown policy';
  if (volume.fate === 'deleted')
    return `${volume.name}: ${
      dryRun ? 'would be deleted' : 'deleted'
    } (${policy})`;
  if (volume.fate === 'released')
    return `${volume.name}: released, still billed (${policy})`;
  return `${volume.name} (${policy})${
    pvc.state === 'deleted' ? ': waiting to see its fate' : ''
  }`;
}

/** Each confirmed claim's state in a prune, updated as its events arrive. */
export function PvcProgressTable(props: PvcProgressTableProps) {
  const { pvcs, dryRun } = props;
  const classes = useStyles();
  return (
    <TableContainer className={classes.container}>
      <Table size="small" stickyHeader aria-label="Claim progress">
        <TableHead>
          <TableRow>
            {/* nowrap: the theme's word-break would split "Details" when the Volume column is long */}
            {['Claim', 'Size', 'Status', 'Volume', 'Details'].map(title => (
              <TableCell key={title} className={classes.nowrap}>
                {title}
              </TableCell>
            ))}
          </TableRow>
        </TableHead>
        <TableBody>
          {pvcs.map(pvc => (
            <TableRow key={pvc.name} data-testid={`progress-${pvc.name}`}>
              <TableCell className={classes.nowrap}>{pvc.name}</TableCell>
              <TableCell className={classes.nowrap}>
                {pvc.bytes !== undefined ? formatBytes(pvc.bytes) : ''}
              </TableCell>
              <TableCell className={classes.nowrap}>
                <PvcStateLabel state={pvc.state} dryRun={dryRun} />
              </TableCell>
              <TableCell>{fate(pvc, dryRun)}</TableCell>
              <TableCell>{pvc.reason ?? ''}</TableCell>
            </TableRow>
          ))}
        </TableBody>
      </Table>
    </TableContainer>
  );
}
