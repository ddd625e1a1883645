import { DiscoveryApi, FetchApi } from '@backstage/core-plugin-api';
import { ResponseError } from '@backstage/errors';
import {
  EventSourceMessage,
  fetchEventSource,
} from '@microsoft/fetch-event-source';
import {
  ClaimKeep,
  FleetResponse,
  KeepClaimRequest,
  KeepSnapshotRequest,
  KeptSnapshot,
  LeftBehindResponse,
  OrphansResponse,
  PVC_PRUNER_PLUGIN_ID,
  PruneEvent,
  PruneJob,
  PruneJobPage,
  PruneRequest,
  ReclaimRequest,
  ReleasedVolumesResponse,
  RestoreRequest,
  RestoreResponse,
  SnapshotsResponse,
  UnownedOrphansResponse,
} from 'backstage-plugin-pvc-pruner-common';
import type { KubernetesAuthProvidersApi } from '@backstage/plugin-kubernetes-react';
import {
  FleetRequest,
  GetOrphansOptions,
  ListPruneJobsRequest,
  PvcPrunerApi,
  UnkeepClaimRequest,
  UnownedOrphansRequest,
} from './PvcPrunerApi';
import { ClusterAuthInfo, ClusterTokenHeaders } from './ClusterTokenHeaders';

const EVENT_STREAM = 'text/event-stream';
/** Reconnects after a dropped stream; a received event resets the count. */
const MAX_RECONNECTS = 5;

/**
 * Options of {@link PvcPrunerClient}.
 *
 * @public
 */
export interface PvcPrunerClientOptions {
  discoveryApi: DiscoveryApi;
  fetchApi: FetchApi;
  /** Milliseconds before the first reconnect of a dropped stream; doubles each time. Default 1000. */
  reconnectDelayMs?: number;
  /**
   * Gets the user's tokens for clusters of client-side providers (google,
   * oidc, aks), as the Kubernetes plugin does; scans and prunes send them.
   */
  kubernetesAuthProvidersApi?: KubernetesAuthProvidersApi;
}

class StreamEndedEarly extends Error {}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise(resolve => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}

/**
 * {@link PvcPrunerApi} over HTTP: `discoveryApi` finds the backend,
 * `fetchApi` carries the user's token, failures become `ResponseError`s.
 *
 * @public
 */
export class PvcPrunerClient implements PvcPrunerApi {
  private readonly discoveryApi: DiscoveryApi;
  private readonly fetchApi: FetchApi;
  private readonly reconnectDelayMs: number;
  private readonly clusterTokens: ClusterTokenHeaders;

  constructor(options: PvcPrunerClientOptions) {
    this.discoveryApi = options.discoveryApi;
    this.fetchApi = options.fetchApi;
    this.reconnectDelayMs = options.reconnectDelayMs ?? 1000;
    this.clusterTokens = new ClusterTokenHeaders(
      async () =>
        (await this.get<{ items: ClusterAuthInfo[] }>('/v1/clusters')).items,
      options.kubernetesAuthProvidersApi,
    );
  }

  async getOrphans(
    entityRef: string,
    options: GetOrphansOptions = {},
  ): Promise<OrphansResponse> {
    // Only the tokens of the clusters the entity maps to: one if it names one, else all.
    return this.get(
      `/v1/orphans?${new URLSearchParams({ entityRef })}`,
      await this.clusterTokens.headers(options.cluster || undefined),
    );
  }

  async getLeftBehind(
    entityRef: string,
    options: GetOrphansOptions = {},
  ): Promise<LeftBehindResponse> {
    return this.get(
      `/v1/left-behind?${new URLSearchParams({ entityRef })}`,
      await this.clusterTokens.headers(options.cluster || undefined),
    );
  }

  async getFleet(request: FleetRequest = {}): Promise<FleetResponse> {
    const query = new URLSearchParams();
    for (const [key, value] of Object.entries(request))
      if (value !== undefined && value !== '') query.set(key, String(value));
    const qs = query.toString();
    // Clusters of client-side providers are read with the user's own token, as on the card.
    return this.get(
      `/v1/fleet${qs ? `?${qs}` : ''}`,
      await this.clusterTokens.headers(request.cluster || undefined),
    );
  }

  async getUnownedOrphans(
    request: UnownedOrphansRequest,
  ): Promise<UnownedOrphansResponse> {
    const { cluster, namespace, statefulSet, leftBy } = request;
    return this.get(
      `/v1/unowned/orphans?${new URLSearchParams({
        cluster,
        namespace,
        statefulSet,
        ...(leftBy ? { leftBy } : {}),
      })}`,
      await this.clusterTokens.headers(cluster),
    );
  }

  async startPrune(request: PruneRequest): Promise<{ id: string }> {
    return this.post('/v1/prune-jobs', request, request.cluster);
  }

  async listSnapshots(
    entityRef: string,
    options: GetOrphansOptions = {},
  ): Promise<SnapshotsResponse> {
    return this.get(
      `/v1/snapshots?${new URLSearchParams({ entityRef })}`,
      await this.clusterTokens.headers(options.cluster || undefined),
    );
  }

  async restoreSnapshot(request: RestoreRequest): Promise<RestoreResponse> {
    return this.post('/v1/restores', request, request.cluster);
  }

  async keepSnapshot(request: KeepSnapshotRequest): Promise<KeptSnapshot> {
    return this.post('/v1/snapshots/keep', request, request.snapshot.cluster);
  }

  async keepClaim(request: KeepClaimRequest): Promise<ClaimKeep> {
    return this.post('/v1/claim-keeps', request, request.cluster);
  }

  async unkeepClaim(request: UnkeepClaimRequest): Promise<void> {
    const { uid, entityRef, cluster } = request;
    const response = await this.fetchApi.fetch(
      await this.url(
        `/v1/claim-keeps/${encodeURIComponent(uid)}?${new URLSearchParams({
          entityRef,
          cluster,
        })}`,
      ),
      { method: 'DELETE', headers: await this.clusterTokens.headers(cluster) },
    );
    if (!response.ok) throw await ResponseError.fromResponse(response);
  }

  /** A JSON POST carrying the user's token for `cluster` when its provider is client-side. */
  private async post<T>(path: string, body: unknown, cluster: string) {
    const response = await this.fetchApi.fetch(await this.url(path), {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        ...(await this.clusterTokens.headers(cluster)),
      },
      body: JSON.stringify(body),
    });
    if (!response.ok) throw await ResponseError.fromResponse(response);
    return (await response.json()) as T;
  }

  async listReleasedVolumes(
    entityRef?: string,
  ): Promise<ReleasedVolumesResponse> {
    return this.get(
      `/v1/released-volumes${
        entityRef ? `?${new URLSearchParams({ entityRef })}` : ''
      }`,
      await this.clusterTokens.headers(undefined),
    );
  }

  async startReclaim(request: ReclaimRequest): Promise<{ id: string }> {
    return this.post('/v1/reclaim-jobs', request, request.cluster);
  }

  async getJob(jobId: string): Promise<PruneJob> {
    return this.get(`/v1/prune-jobs/${encodeURIComponent(jobId)}`);
  }

  async listJobs(request: ListPruneJobsRequest): Promise<PruneJobPage> {
    const query = new URLSearchParams({ entityRef: request.entityRef });
    if (request.limit !== undefined) query.set('limit', String(request.limit));
    if (request.cursor) query.set('cursor', request.cursor);
    return this.get(`/v1/prune-jobs?${query}`);
  }

  async streamJobEvents(
    jobId: string,
    after: number,
    onEvent: (event: PruneEvent) => void,
    signal?: AbortSignal,
  ): Promise<void> {
    let last = after;
    let finished = false;
    let failures = 0;
    const accept = (event: PruneEvent) => {
      // A reconnect replays from `last`; never hand out an event twice.
      if (event.seq <= last) return;
      last = event.seq;
      failures = 0;
      if (event.type === 'job-finished') finished = true;
      onEvent(event);
    };
    while (!finished && !signal?.aborted) {
      try {
        await this.streamOnce(jobId, last, accept, signal);
        if (!finished && !signal?.aborted) {
          throw new StreamEndedEarly(
            `The event stream of job ${jobId} ended before the job finished`,
          );
        }
      } catch (error) {
        if (error instanceof ResponseError || failures >= MAX_RECONNECTS) {
          throw error;
        }
        await sleep(this.reconnectDelayMs * 2 ** failures, signal);
        failures += 1;
      }
    }
  }

  /** One connection: resolves when it closes, or at once after job-finished. */
  private async streamOnce(
    jobId: string,
    after: number,
    accept: (event: PruneEvent) => void,
    signal?: AbortSignal,
  ): Promise<void> {
    const url = await this.url(
      `/v1/prune-jobs/${encodeURIComponent(jobId)}/events?after=${after}`,
    );
    // Aborted while the URL was being looked up: an abort listener would never fire.
    if (signal?.aborted) return;
    const ctrl = new AbortController();
    const abort = () => ctrl.abort();
    signal?.addEventListener('abort', abort);
    try {
      await fetchEventSource(url, {
        fetch: this.fetchApi.fetch,
        signal: ctrl.signal,
        openWhenHidden: true,
        async onopen(response) {
          if (!response.ok) throw await ResponseError.fromResponse(response);
          const type = response.headers.get('content-type') ?? '';
          if (!type.startsWith(EVENT_STREAM)) {
            throw new Error(
              `Expected ${EVENT_STREAM} from ${url}, got "${type}"`,
            );
          }
        },
        onmessage(message: EventSourceMessage) {
          // `error` frames report a passing failure of the backend's store; it keeps polling.
          if (!message.data || message.event === 'error') return;
          const event = JSON.parse(message.data) as PruneEvent;
          if (typeof event.seq !== 'number') return;
          accept(event);
          if (event.type === 'job-finished') ctrl.abort();
        },
        onerror(error) {
          // Stop fetch-event-source's own retries: they would reuse the old `after`.
          throw error;
        },
      });
    } finally {
      signal?.removeEventListener('abort', abort);
    }
  }

  private async get<T>(
    path: string,
    headers?: Record<string, string>,
  ): Promise<T> {
    const response = await this.fetchApi.fetch(
      await this.url(path),
      headers && Object.keys(headers).length > 0 ? { headers } : undefined,
    );
    if (!response.ok) throw await ResponseError.fromResponse(response);
    return response.json();
  }

  private async url(path: string): Promise<string> {
    return `${await this.discoveryApi.getBaseUrl(PVC_PRUNER_PLUGIN_ID)}${path}`;
  }
}
