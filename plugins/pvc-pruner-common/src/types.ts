/**
 * Wire types of the pvc-pruner HTTP API (base `/api/pvc-pruner`), as the
 * backend's OpenAPI spec describes them: each is its generated schema type.
 * Sizes are bytes; times are ISO 8601 strings.
 */
import type { components } from './schema/openapi';

/** The volume bound to an orphaned claim. @public */
export type PersistentVolumeSummary =
  components['schemas']['PersistentVolumeSummary'];

/** A claim of an ordinal the StatefulSet no longer runs, that no pod references. @public */
export type OrphanedPvc = components['schemas']['OrphanedPvc'];

/**
 * Why a claim that matches a template's name is kept, other than being a
 * claim of an ordinal the StatefulSet runs (those are {@link InUsePvcs}). @public
 */
export type KeptReason = components['schemas']['KeptReason'];

/** A claim that matches a template's name but is kept, with its reason. @public */
export type KeptPvc = components['schemas']['KeptPvc'];

/**
 * A template's claims at ordinals the StatefulSet runs now. @public
 */
export type InUsePvcs = components['schemas']['InUsePvcs'];

/** One StatefulSet of the entity: what it runs, its orphans and the claims it keeps. @public */
export type StatefulSetOrphans = components['schemas']['StatefulSetOrphans'];

/** One cluster's answer: its StatefulSets, or the error that kept it from answering. @public */
export type ClusterOrphans = components['schemas']['ClusterOrphans'];

/** Response of `GET /v1/orphans?entityRef=`. @public */
export type OrphansResponse = components['schemas']['OrphansResponse'];

/** Body of `POST /v1/prune-jobs`. @public */
export type PruneRequest = components['schemas']['PruneRequest'];

/** Where a prune job is; `succeeded`, `failed`, `aborted` and `interrupted` are final. @public */
export type PruneJobStatus = components['schemas']['PruneJobStatus'];

/** The statuses a job ends in. @public */
export const TERMINAL_JOB_STATUSES: ReadonlyArray<PruneJobStatus> = [
  'succeeded',
  'failed',
  'aborted',
  'interrupted',
];

/** What became of one claim in a prune. @public */
export type PvcOutcome = components['schemas']['PvcOutcome'];

/** What a prune did to each confirmed claim, and the bytes it reclaimed. @public */
export type PruneSummary = components['schemas']['PruneSummary'];

/** A prune (or dry run) of confirmed claims of one StatefulSet. @public */
export type PruneJob = components['schemas']['PruneJob'];

/** The kinds of {@link PruneEvent}. @public */
export type PruneEventType = components['schemas']['PruneEventType'];

/** One entry in a job's ordered event log (and one SSE frame). @public */
export type PruneEvent = components['schemas']['PruneEvent'];

/** A page of an entity's prune jobs, newest first. @public */
export type PruneJobPage = components['schemas']['PruneJobPage'];
