import { useEffect, useRef } from 'react';
import { Typography, makeStyles } from '@material-ui/core';
import { PruneEvent } from 'backstage-plugin-pvc-pruner-common';

const useStyles = makeStyles(theme => ({
  log: {
    maxHeight: 240,
    overflowY: 'auto',
    padding: theme.spacing(1),
    border: `1px solid ${theme.palette.divider}`,
    borderRadius: theme.shape.borderRadius,
    fontFamily: 'monospace',
    fontSize: '0.8rem',
    margin: 0,
    listStyle: 'none',
  },
  time: { color: theme.palette.text.secondary, marginRight: theme.spacing(1) },
}));

/** Props of {@link EventLog}. */
export interface EventLogProps {
  events: PruneEvent[];
  /** Names the log for assistive technology. */
  label?: string;
}

function clock(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleTimeString();
}

/** A job's events in order, as a live log. */
export function EventLog(props: EventLogProps) {
  const { events, label = 'Prune events' } = props;
  const classes = useStyles();
  const ref = useRef<HTMLOListElement>(null);
  const followRef = useRef(true);

  // Keep the newest event in view, unless the reader scrolled up.
  useEffect(() => {
    const el = ref.current;
    if (el && followRef.current) el.scrollTop = el.scrollHeight;
  }, [events.length]);

  if (events.length === 0) {
    return (
      <Typography variant="body2" color="textSecondary">
        No events yet.
      </Typography>
    );
  }
  return (
    <ol
      ref={ref}
      className={classes.log}
      role="log"
      aria-label={label}
      aria-live="polite"
      onScroll={e => {
        const el = e.currentTarget;
        followRef.current =
          el.scrollHeight - el.scrollTop - el.clientHeight < 24;
      }}
    >
      {events.map(event => (
        <li key={event.seq}>
          <span className={classes.time}>{clock(event.at)}</span>
          {event.message}
        </li>
      ))}
    </ol>
  );
}
