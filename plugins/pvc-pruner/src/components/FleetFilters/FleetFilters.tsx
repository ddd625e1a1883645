import { Box, MenuItem, TextField, makeStyles } from '@material-ui/core';
import { FleetFilters as Filters } from '../../hooks/useFleet';

const useStyles = makeStyles(theme => ({
  field: { minWidth: 220, marginRight: theme.spacing(2) },
}));

/** Props of {@link FleetFilters}. */
export interface FleetFiltersProps {
  filters: Filters;
  options: { clusters: string[]; namespaces: string[]; owners: string[] };
  onChange: (filters: Filters) => void;
}

const ALL = '';

/** Cluster, namespace and owner pickers; "All" clears a filter. */
export function FleetFilters(props: FleetFiltersProps) {
  const { filters, options, onChange } = props;
  const classes = useStyles();
  const select = (key: keyof Filters, label: string, values: string[]) => (
    <TextField
      select
      label={label}
      value={filters[key] ?? ALL}
      className={classes.field}
      variant="outlined"
      size="small"
      InputLabelProps={{ shrink: true }}
      SelectProps={{
        displayEmpty: true,
        SelectDisplayProps: { 'aria-label': label },
      }}
      onChange={e =>
        onChange({ ...filters, [key]: e.target.value || undefined })
      }
    >
      <MenuItem value={ALL}>All</MenuItem>
      {values.map(v => (
        <MenuItem key={v} value={v}>
          {v}
        </MenuItem>
      ))}
    </TextField>
  );
  return (
    <Box display="flex" flexWrap="wrap" mb={2}>
      {select('cluster', 'Cluster', options.clusters)}
      {select('namespace', 'Namespace', options.namespaces)}
      {select('owner', 'Owner', options.owners)}
    </Box>
  );
}
