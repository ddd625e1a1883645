import {
  Accordion,
  AccordionDetails,
  AccordionSummary,
  List,
  ListItem,
  ListItemText,
  Typography,
} from '@material-ui/core';
import ExpandMoreIcon from '@material-ui/icons/ExpandMore';
import {
  describeInUse,
  describeKept,
  InUsePvcs,
  StatefulSetOrphans,
} from 'backstage-plugin-pvc-pruner-common';
import { plural } from '../../utils/format';

/** Props of {@link KeptPvcList}. */
export interface KeptPvcListProps {
  statefulSet: Pick<StatefulSetOrphans, 'name' | 'ordinals' | 'inUse' | 'kept'>;
}

/** A template's in-use claims by name: all of them when few, else the first and last. */
function inUseNames(group: InUsePvcs, statefulSetName: string) {
  const name = (ordinal: number) =>
    `${group.template}-${statefulSetName}-${ordinal}`;
  const { ordinals } = group;
  if (ordinals.length <= 3) return ordinals.map(name).join(', ');
  return `${name(ordinals[0])} … ${name(ordinals[ordinals.length - 1])} (${
    ordinals.length
  } claims)`;
}

/** The StatefulSet's claims that are not orphans, and why, behind a disclosure. */
export function KeptPvcList(props: KeptPvcListProps) {
  const { statefulSet } = props;
  // `?? []`: during a rolling deploy, an older backend replica may answer without it.
  const { inUse = [], kept } = statefulSet;
  const count =
    kept.length + inUse.reduce((n, group) => n + group.ordinals.length, 0);
  if (count === 0) return null;
  const id = `kept-${statefulSet.name}`;
  return (
    <Accordion variant="outlined" TransitionProps={{ unmountOnExit: true }}>
      <AccordionSummary
        expandIcon={<ExpandMoreIcon />}
        aria-controls={`${id}-content`}
        id={`${id}-header`}
      >
        <Typography variant="body2">
          {plural(count, 'claim')} kept, and why
        </Typography>
      </AccordionSummary>
      <AccordionDetails id={`${id}-content`}>
        <List dense disablePadding>
          {inUse.map(group => (
            <ListItem key={`in-use-${group.template}`} disableGutters>
              <ListItemText
                primary={inUseNames(group, statefulSet.name)}
                secondary={describeInUse(group, statefulSet)}
              />
            </ListItem>
          ))}
          {kept.map(pvc => (
            <ListItem key={pvc.uid} disableGutters>
              <ListItemText
                primary={pvc.name}
                secondary={describeKept(pvc, statefulSet)}
              />
            </ListItem>
          ))}
        </List>
      </AccordionDetails>
    </Accordion>
  );
}
