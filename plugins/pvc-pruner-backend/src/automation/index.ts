export * from './AutoPrunePlanner';
export * from './autoPruneOptions';
export * from './autoPruneVerdict';
export * from './keepAnnotation';
export * from './types';
export * from './ClaimKeepStore';
export * from './AutoPruneAnswer';
export * from './ClaimKeepRequests';
