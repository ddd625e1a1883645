/**
 * The campaign's user: the pvc-pruner HTTP API of one replica, used as a
 * black box with the guest's token, as the card uses it.
 */
import type {
  KeepClaimRequest,
  OrphansResponse,
  PruneEvent,
  PruneJob,
  PruneJobPage,
} from 'backstage-plugin-pvc-pruner-common';

export const CLUSTER = 'demo';
const sleep = (ms: number) => new Promise(r => setTimeout(r, ms));

export type PostOutcome =
  | { kind: 'accepted'; jobId: string; status: number }
  | { kind: 'refused'; status: number; message: string }
  /** No answer (the replica died or froze past the timeout): the job may exist. */
  | { kind: 'unknown'; message: string };

/**
 * What the campaign reads of `GET /v1/left-behind`: the claims each
 * deleted StatefulSet left behind, and what they are traced by.
 */
export interface LeftBehindGroupView {
  namespace: string;
  statefulSet: { name: string; uid?: string };
  evidence: 'lineage' | 'name-and-labels';
  report: { orphans: Array<{ name: string; uid: string }> };
}

/** What the campaign reads of `GET /v1/released-volumes`. */
export interface ReleasedVolumeView {
  name: string;
  uid: string;
  resourceVersion: string;
  claim: { namespace: string; name: string; uid: string };
  reclaimable: boolean;
  canReclaim: boolean;
}

/** A Released volume as the user confirms it in `POST /v1/reclaim-jobs`. */
export interface ReclaimVolumeRef {
  name: string;
  uid: string;
  resourceVersion: string;
  claimUid: string;
}

/** The user's open event streams are at their limit (429). */
class TooManyStreams extends Error {
  constructor(id: string) {
    super(`events of ${id}: 429, too many open event streams`);
  }
}

export class BackendClient {
  constructor(readonly baseUrl: string, private readonly token: string) {}

  private async call(path: string, init: RequestInit = {}, timeoutMs = 15000) {
    return fetch(`${this.baseUrl}/api/pvc-pruner${path}`, {
      ...init,
      headers: {
        Authorization: `Bearer ${this.token}`,
        'Content-Type': 'application/json',
        ...(init.headers ?? {}),
      },
      signal: AbortSignal.timeout(timeoutMs),
    });
  }

  /** The entity's scan, as its card asks for it. */
  async orphans(entityRef: string): Promise<OrphansResponse> {
    const res = await this.call(
      `/v1/orphans?entityRef=${encodeURIComponent(entityRef)}`,
    );
    if (!res.ok)
      throw new Error(`GET /v1/orphans: ${res.status} ${await res.text()}`);
    return (await res.json()) as OrphansResponse;
  }

  /** The claims deleted StatefulSets left behind, as the entity's card asks for them. */
  async leftBehind(entityRef: string): Promise<LeftBehindGroupView[]> {
    const res = await this.call(
      `/v1/left-behind?entityRef=${encodeURIComponent(entityRef)}`,
    );
    if (!res.ok)
      throw new Error(`GET /v1/left-behind: ${res.status} ${await res.text()}`);
    const body = (await res.json()) as {
      clusters: Array<{ ok: boolean; groups?: LeftBehindGroupView[] }>;
    };
    return body.clusters.flatMap(c => (c.ok ? c.groups ?? [] : []));
  }

  /** The Released volumes traced to the entity, as its card asks for them. */
  async releasedVolumes(entityRef: string): Promise<ReleasedVolumeView[]> {
    const res = await this.call(
      `/v1/released-volumes?entityRef=${encodeURIComponent(entityRef)}`,
    );
    if (!res.ok)
      throw new Error(
        `GET /v1/released-volumes: ${res.status} ${await res.text()}`,
      );
    return ((await res.json()) as { items: ReleasedVolumeView[] }).items;
  }

  async prune(body: {
    entityRef: string;
    namespace: string;
    statefulSet: string;
    pvcs: Array<{ name: string; uid: string }>;
    dryRun: boolean;
    /** Keep a VolumeSnapshot of each claim (sent only when true). */
    snapshot?: boolean;
    /** Claims a deleted StatefulSet left behind, rather than orphans of a live one. */
    leftBy?: {
      evidence: 'lineage' | 'name-and-labels';
      statefulSetUid?: string;
      typedNames?: string[];
    };
  }): Promise<PostOutcome> {
    return this.startJob('/v1/prune-jobs', body);
  }

  async reclaim(body: {
    entityRef: string;
    namespace: string;
    volumes: ReclaimVolumeRef[];
    dryRun: boolean;
  }): Promise<PostOutcome> {
    return this.startJob('/v1/reclaim-jobs', body);
  }

  private async startJob(path: string, body: object): Promise<PostOutcome> {
    try {
      const res = await this.call(
        path,
        {
          method: 'POST',
          body: JSON.stringify({ cluster: CLUSTER, ...body }),
        },
        30000,
      );
      const text = await res.text();
      if (res.status === 202)
        return { kind: 'accepted', jobId: JSON.parse(text).id, status: 202 };
      return {
        kind: 'refused',
        status: res.status,
        message: text.slice(0, 300),
      };
    } catch (e) {
      return { kind: 'unknown', message: String((e as Error).message ?? e) };
    }
  }

  /**
   * Keeps a claim from automatic pruning, as the card's "Keep this claim"
   * does: the status (201 acknowledged, 409 refused while an automatic
   * prune deletes it, …), or undefined when no answer came.
   */
  async keepClaim(
    body: Omit<KeepClaimRequest, 'cluster'>,
  ): Promise<number | undefined> {
    return this.answerStatus('/v1/claim-keeps', {
      method: 'POST',
      body: JSON.stringify({ cluster: CLUSTER, ...body }),
    });
  }

  /** Stops keeping a claim kept through the card: 204, or undefined when no answer came. */
  async unkeepClaim(
    uid: string,
    entityRef: string,
  ): Promise<number | undefined> {
    return this.answerStatus(
      `/v1/claim-keeps/${encodeURIComponent(
        uid,
      )}?entityRef=${encodeURIComponent(entityRef)}&cluster=${CLUSTER}`,
      { method: 'DELETE' },
    );
  }

  private async answerStatus(path: string, init: RequestInit) {
    try {
      const res = await this.call(path, init, 10000);
      await res.text();
      return res.status;
    } catch {
      return undefined;
    }
  }

  async job(id: string): Promise<PruneJob | undefined> {
    const res = await this.call(`/v1/prune-jobs/${id}`, {}, 5000);
    if (!res.ok) return undefined;
    return (await res.json()) as PruneJob;
  }

  /** History of the entity, newest first (one page is enough for one scenario's jobs). */
  async history(entityRef: string, limit = 50): Promise<PruneJob[]> {
    const res = await this.call(
      `/v1/prune-jobs?entityRef=${encodeURIComponent(
        entityRef,
      )}&limit=${limit}`,
      {},
      5000,
    );
    if (!res.ok) throw new Error(`GET /v1/prune-jobs: ${res.status}`);
    return ((await res.json()) as PruneJobPage).items;
  }

  /**
   * The job's event log as the event stream replays it; ends at
   * job-finished (or the timeout). A 429 (the user's open streams at their
   * limit, while the card's streams of a moment ago close) is waited out.
   */
  async events(id: string, timeoutMs = 5000): Promise<PruneEvent[]> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.eventsOnce(id, timeoutMs);
      } catch (e) {
        if (!(e instanceof TooManyStreams) || attempt >= 5) throw e;
        await sleep(500 * attempt);
      }
    }
  }

  private async eventsOnce(
    id: string,
    timeoutMs: number,
  ): Promise<PruneEvent[]> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), timeoutMs);
    const events: PruneEvent[] = [];
    try {
      const res = await fetch(
        `${this.baseUrl}/api/pvc-pruner/v1/prune-jobs/${id}/events`,
        {
          headers: {
            Authorization: `Bearer ${this.token}`,
            Accept: 'text/event-stream',
          },
          signal: controller.signal,
        },
      );
      if (res.status === 429) throw new TooManyStreams(id);
      if (!res.ok || !res.body)
        throw new Error(`events of ${id}: ${res.status}`);
      const decoder = new TextDecoder();
      let buffer = '';
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        for (
          let end = buffer.indexOf('\n\n');
          end >= 0;
          end = buffer.indexOf('\n\n')
        ) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = frame
            .split('\n')
            .filter(l => l.startsWith('data: '))
            .map(l => l.slice(6))
            .join('\n');
          if (!data) continue;
          const event = JSON.parse(data) as PruneEvent;
          events.push(event);
          if (event.type === 'job-finished') {
            controller.abort();
            return events;
          }
        }
      }
    } catch (e) {
      if (!controller.signal.aborted) throw e;
    } finally {
      clearTimeout(timer);
    }
    return events;
  }
}
