import { Alert, AlertTitle } from '@material-ui/lab';

/** Props of {@link NotAllowedNotice}. */
export interface NotAllowedNoticeProps {
  entityRef: string;
}

/** Explains, instead of failing, that the user may not list the entity's orphaned volumes. */
export function NotAllowedNotice(props: NotAllowedNoticeProps) {
  return (
    <Alert severity="info">
      <AlertTitle>You can't see this entity's orphaned volumes</AlertTitle>
      Listing them needs the pvc-pruner.orphans.read permission on{' '}
      {props.entityRef}, which you don't have. Ask the entity's owners or your
      Backstage administrators if you need it.
    </Alert>
  );
}
