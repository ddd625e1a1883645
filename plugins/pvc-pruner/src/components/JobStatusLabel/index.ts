export { JobStatusLabel } from './JobStatusLabel';
export type { JobStatusLabelProps } from './JobStatusLabel';
