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
  KeptPvc,
  StatefulSetOrphans,
} from 'backstage-plugin-pvc-pruner-common';
import { claimNamesInShort, plural } from '../../utils/format';

/** Props of {@link KeptPvcList}. */
export interface KeptPvcListProps {
  statefulSet: Pick<StatefulSetOrphans, 'name' | 'ordinals' | 'inUse' | 'kept'>;
}

/**
 * Kept claims of one template that are kept for the same reason, worded the
 * same: a paused StatefulSet of 50 claims is one line, not 50 identical ones.
 */
function groupKept(
  kept: KeptPvc[],
  statefulSet: KeptPvcListProps['statefulSet'],
): Array<{ key: string; names: string[]; why: string }> {
  const groups = new Map<
    string,
    { key: string; names: string[]; why: string }
  >();
  for (const pvc of kept) {
    const why = describeKept(pvc, statefulSet);
    const key = `${pvc.template}\n${why}`;
    const group = groups.get(key);
    if (group) group.names.push(pvc.name);
    else groups.set(key, { key: pvc.uid, names: [pvc.name], why });
  }
  return [...groups.values()];
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
                primary={claimNamesInShort(
                  group.ordinals.map(
                    o => `${group.template}-${statefulSet.name}-${o}`,
                  ),
                )}
                secondary={describeInUse(group, statefulSet)}
              />
            </ListItem>
          ))}
          {groupKept(kept, statefulSet).map(group => (
            <ListItem key={group.key} disableGutters>
              <ListItemText
                primary={claimNamesInShort(group.names)}
                secondary={group.why}
              />
            </ListItem>
          ))}
        </List>
      </AccordionDetails>
    </Accordion>
  );
}
