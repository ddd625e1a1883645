/**
 * Wire types of the pvc-pruner HTTP API (base `/api/pvc-pruner`), as the
 * backend's OpenAPI spec describes them: each is its generated schema type.
 * Sizes are bytes; times are ISO 8601 strings.
 */
import type { components } from './schema/openapi';

type Schemas = components['schemas'];

/** @public */
export type PersistentVolumeSummary = Schemas['PersistentVolumeSummary'];

/** @public */
export type OrphanedPvc = Schemas['OrphanedPvc'];

/**
 * Why a claim that matches a template's name is kept, other than being a
 * claim of an ordinal the StatefulSet runs (those are {@link InUsePvcs}). @public
 */
export type KeptReason = Schemas['KeptReason'];

/** @public */
export type KeptPvc = Schemas['KeptPvc'];

/**
 * A template's claims at ordinals the StatefulSet runs now. @public
 */
export type InUsePvcs = Schemas['InUsePvcs'];

/** @public */
export type StatefulSetOrphans = Schemas['StatefulSetOrphans'];

/** @public */
export type ClusterOrphans = Schemas['ClusterOrphans'];

/** Response of `GET /v1/orphans?entityRef=`. @public */
export type OrphansResponse = Schemas['OrphansResponse'];

/** Body of `POST /v1/prune-jobs`. @public */
export type PruneRequest = Schemas['PruneRequest'];

/** @public */
export type PruneJobStatus = Schemas['PruneJobStatus'];

/** @public */
export const TERMINAL_JOB_STATUSES: ReadonlyArray<PruneJobStatus> = [
  'succeeded',
  'failed',
  'aborted',
  'interrupted',
];

/** What became of one claim in a prune. @public */
export type PvcOutcome = Schemas['PvcOutcome'];

/** @public */
export type PruneSummary = Schemas['PruneSummary'];

/** @public */
export type PruneJob = Schemas['PruneJob'];

/** @public */
export type PruneEventType = Schemas['PruneEventType'];

/** One entry in a job's ordered event log (and one SSE frame). @public */
export type PruneEvent = Schemas['PruneEvent'];

/** @public */
export type PruneJobPage = Schemas['PruneJobPage'];
