import { Alert, AlertTitle } from '@material-ui/lab';
import {
  describeFinalizers,
  StatefulSetOrphans,
} from 'backstage-plugin-pvc-pruner-common';
import { plural } from '../../utils/format';

/** Props of {@link TerminatingNotice}. */
export interface TerminatingNoticeProps {
  statefulSet: Pick<StatefulSetOrphans, 'kept'>;
}

/**
 * The StatefulSet's claims whose deletion was accepted but that finalizers
 * still hold, with what holds each: they are neither offered for pruning nor
 * reattachable while their deletion is pending.
 */
export function TerminatingNotice(props: TerminatingNoticeProps) {
  const terminating = props.statefulSet.kept.filter(
    k => k.reason === 'terminating',
  );
  if (terminating.length === 0) return null;
  return (
    <Alert severity="warning" role="status">
      <AlertTitle>
        {plural(terminating.length, 'claim')} still terminating, not deleted
      </AlertTitle>
      {terminating
        .map(k => `${k.name} (${describeFinalizers(k.finalizers ?? [])})`)
        .join(', ')}
      . Deletion was accepted and waits for the finalizers to be removed; until
      then the claim and its disk stay, and it is neither offered for pruning
      nor reattached to a pod.
    </Alert>
  );
}
