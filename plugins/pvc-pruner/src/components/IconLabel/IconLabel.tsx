import { ReactNode } from 'react';
import { Box, Typography, makeStyles } from '@material-ui/core';

/** The colour family of a label; the icon and the word carry the meaning. */
export type IconLabelTone =
  | 'neutral'
  | 'progress'
  | 'success'
  | 'warning'
  | 'error';

const useStyles = makeStyles(theme => ({
  neutral: { color: theme.palette.text.secondary },
  progress: { color: theme.palette.info.main },
  success: { color: theme.palette.success.main },
  warning: { color: theme.palette.warning.dark },
  error: { color: theme.palette.error.main },
}));

/** Props of {@link IconLabel}. */
export interface IconLabelProps {
  icon: ReactNode;
  text: string;
  tone: IconLabelTone;
  'data-testid'?: string;
}

/** A status as an icon and a word, never colour alone. */
export function IconLabel(props: IconLabelProps) {
  const classes = useStyles();
  return (
    <Box
      display="inline-flex"
      alignItems="center"
      gridGap={6}
      className={classes[props.tone]}
    >
      {props.icon}
      <Typography
        variant="body2"
        component="span"
        data-testid={props['data-testid']}
      >
        {props.text}
      </Typography>
    </Box>
  );
}
