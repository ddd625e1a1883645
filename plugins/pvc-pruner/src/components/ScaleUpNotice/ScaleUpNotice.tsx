import { makeStyles } from '@material-ui/core';
import { Alert, AlertTitle } from '@material-ui/lab';
import {
  describeKept,
  KeptPvc,
  StatefulSetOrphans,
} from 'backstage-plugin-pvc-pruner-common';
import { claimNamesInShort, plural } from '../../utils/format';

const useStyles = makeStyles(theme => ({
  alert: { marginTop: theme.spacing(1) },
  code: { fontFamily: 'monospace' },
}));

/** Props of {@link ScaleUpNotice}. */
export interface ScaleUpNoticeProps {
  statefulSet: Pick<
    StatefulSetOrphans,
    'name' | 'namespace' | 'ordinals' | 'retentionPolicy' | 'kept'
  >;
}

const names = (kept: KeptPvc[]) => claimNamesInShort(kept.map(k => k.name));

/** The reasons of claims kept because a scale-up would reattach them. */
const SCALE_UP_REASONS = new Set<KeptPvc['reason']>([
  'paused',
  'autoscaler-range',
  'autoscalers-unreadable',
]);

/** Whether the StatefulSet keeps claims because a scale-up would reattach them (what {@link ScaleUpNotice} explains). */
export function keepsClaimsForScaleUp(sts: Pick<StatefulSetOrphans, 'kept'>) {
  return sts.kept.some(k => SCALE_UP_REASONS.has(k.reason));
}

/** Why a paused StatefulSet's claims are kept, and how to retire it instead. */
function Paused({
  statefulSet: sts,
  kept,
}: ScaleUpNoticeProps & { kept: KeptPvc[] }) {
  const classes = useStyles();
  const deletes = sts.retentionPolicy.whenDeleted === 'Delete';
  return (
    <Alert severity="info" className={classes.alert} role="status">
      <AlertTitle>
        {sts.name} is paused at 0 replicas: {plural(kept.length, 'claim')} kept
      </AlertTitle>
      Scaling it up again reattaches {names(kept)}, data and all, so{' '}
      {kept.length === 1 ? 'it is' : 'they are'} not offered for pruning. To
      retire {sts.name} instead, delete the StatefulSet itself
      {deletes ? (
        <>
          : its <span className={classes.code}>whenDeleted</span> retention
          policy is <span className={classes.code}>Delete</span>, so Kubernetes
          deletes with it the claims the StatefulSet controller marked while
          their pods ran. Delete any claim that stays with kubectl.
        </>
      ) : (
        <>
          , then its claims with kubectl: its{' '}
          <span className={classes.code}>whenDeleted</span> retention policy is{' '}
          <span className={classes.code}>Retain</span>, so Kubernetes keeps them
          (and pvc-pruner, which finds claims through their StatefulSet, no
          longer lists them). Setting{' '}
          <span className={classes.code}>whenDeleted: Delete</span> now does not
          help: the StatefulSet controller marks only the claims of the pods it
          runs, and it runs none.
        </>
      )}
    </Alert>
  );
}

/** Why claims inside an autoscaler's range are kept. */
function InAutoscalerRange({
  statefulSet: sts,
  kept,
}: ScaleUpNoticeProps & { kept: KeptPvc[] }) {
  const classes = useStyles();
  const { name, maxReplicas } = kept[0].autoscaler ?? { name: '' };
  return (
    <Alert severity="info" className={classes.alert} role="status">
      <AlertTitle>
        {plural(kept.length, 'claim')} kept for HorizontalPodAutoscaler {name}
      </AlertTitle>
      {maxReplicas === undefined ? (
        <>
          It targets {sts.name} with a maxReplicas that is not a replica count,
          so it could scale it up to any ordinal: {names(kept)}{' '}
          {kept.length === 1 ? 'is' : 'are'} kept.
        </>
      ) : (
        <>
          It may scale {sts.name} up to {maxReplicas} replicas, and the
          StatefulSet controller would then reattach {names(kept)}, data and
          all. Claims of ordinals from {sts.ordinals.start + maxReplicas} up are
          offered as orphans.
        </>
      )}
    </Alert>
  );
}

/** Why claims are kept when the namespace's autoscalers could not be read. */
function AutoscalersUnknown({
  statefulSet: sts,
  kept,
}: ScaleUpNoticeProps & { kept: KeptPvc[] }) {
  const classes = useStyles();
  return (
    <Alert severity="warning" className={classes.alert} role="status">
      <AlertTitle>
        {plural(kept.length, 'claim')} kept: the autoscalers of {sts.namespace}{' '}
        could not be read
      </AlertTitle>
      {names(kept)}: {describeKept(kept[0], sts)}. Ask your platform team to
      grant it.
    </Alert>
  );
}

/**
 * The claims a scale-up would bring back, and why they are kept: those of a
 * StatefulSet paused at 0 replicas (with how to retire it instead), those
 * inside a HorizontalPodAutoscaler's range, and those kept because the
 * autoscalers could not be read.
 */
export function ScaleUpNotice(props: ScaleUpNoticeProps) {
  const { kept } = props.statefulSet;
  const paused = kept.filter(k => k.reason === 'paused');
  const inRange = kept.filter(k => k.reason === 'autoscaler-range');
  const unknown = kept.filter(k => k.reason === 'autoscalers-unreadable');
  return (
    <>
      {paused.length > 0 && <Paused {...props} kept={paused} />}
      {inRange.length > 0 && <InAutoscalerRange {...props} kept={inRange} />}
      {unknown.length > 0 && <AutoscalersUnknown {...props} kept={unknown} />}
    </>
  );
}
