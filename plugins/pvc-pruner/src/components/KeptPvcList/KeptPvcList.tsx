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
  describeKept,
  StatefulSetOrphans,
} from 'backstage-plugin-pvc-pruner-common';
import { plural } from '../../utils/format';

/** Props of {@link KeptPvcList}. */
export interface KeptPvcListProps {
  statefulSet: Pick<StatefulSetOrphans, 'name' | 'ordinals' | 'kept'>;
}

/** The StatefulSet's claims that are not orphans, and why, behind a disclosure. */
export function KeptPvcList(props: KeptPvcListProps) {
  const { statefulSet } = props;
  const { kept } = statefulSet;
  if (kept.length === 0) return null;
  const id = `kept-${statefulSet.name}`;
  return (
    <Accordion variant="outlined" TransitionProps={{ unmountOnExit: true }}>
      <AccordionSummary
        expandIcon={<ExpandMoreIcon />}
        aria-controls={`${id}-content`}
        id={`${id}-header`}
      >
        <Typography variant="body2">
          {plural(kept.length, 'claim')} kept, and why
        </Typography>
      </AccordionSummary>
      <AccordionDetails id={`${id}-content`}>
        <List dense disablePadding>
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
