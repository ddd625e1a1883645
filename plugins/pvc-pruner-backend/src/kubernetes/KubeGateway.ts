import { ClusterConnection } from './ClusterConnection';
import { RawApiClient } from './RawApiClient';
import { apiPath, KubeResource } from './apiPath';
import {
  ApiException,
  CoordinationV1Api,
  V1Lease,
  V1Namespace,
  V1PersistentVolume,
  V1PersistentVolumeClaim,
  V1Pod,
  V1StatefulSet,
  V2HorizontalPodAutoscaler,
  Watch,
} from '@kubernetes/client-node';

/** A failure answered by (or on the way to) a cluster, safe to show: it never carries credentials. */
export class ClusterRequestError extends Error {
  constructor(
    readonly cluster: string,
    message: string,
    /** The Kubernetes HTTP status, when the cluster answered. */
    readonly statusCode?: number,
    /** metav1.Status reason, e.g. Conflict, NotFound, Forbidden. */
    readonly reason?: string,
  ) {
    super(message);
    this.name = 'ClusterRequestError';
  }
}

export type WatchEvent<T> = {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: T;
};

function statusOf(body: unknown): { message?: string; reason?: string } {
  try {
    const parsed = typeof body === 'string' ? JSON.parse(body) : body;
    return { message: parsed?.message, reason: parsed?.reason };
  } catch {
    return {};
  }
}

/** Options of a {@link KubeGateway}. */
export interface KubeGatewayOptions {
  /** Objects per list page (500 unless told). */
  pageSize?: number;
  /**
   * The client-side auth provider (google, oidc, aks) whose user token this
   * gateway sends: a 401 then means that token expired or was refused.
   */
  userTokenProvider?: string;
}

/**
 * The Kubernetes calls pvc-pruner makes, for one cluster: the only place
 * that knows client-node. Every call has a timeout and fails with a
 * ClusterRequestError naming the cluster.
 */
export class KubeGateway {
  private readonly coordination: CoordinationV1Api;
  private readonly watcher: Watch;
  private readonly api: RawApiClient;
  private readonly pageSize: number;
  /** Set when the cluster refused the user's token (401): nothing more can be done with it. */
  userTokenRefused?: ClusterRequestError;

  /** Whether this gateway carries a user's token (a client-side provider), not the plugin's own credentials. */
  get actsForUser(): boolean {
    return Boolean(this.options.userTokenProvider);
  }

  constructor(
    readonly cluster: string,
    connection: ClusterConnection,
    private readonly timeoutMs: number,
    private readonly options: KubeGatewayOptions = {},
  ) {
    this.pageSize = options.pageSize ?? 500;
    this.api = new RawApiClient(connection);
    const kubeConfig = connection.kubeConfig();
    this.coordination = kubeConfig.makeApiClient(CoordinationV1Api);
    this.watcher = new Watch(kubeConfig);
  }

  /** Runs a request with the cluster's timeout; `fn` gets a signal that aborts when it expires. */
  private async call<T>(
    what: string,
    fn: (signal: AbortSignal) => Promise<T>,
  ): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const abandoned = new AbortController();
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        // Rejected first, so the race settles as a timeout, not as the abort it causes.
        reject(
          new ClusterRequestError(
            this.cluster,
            `cluster "${this.cluster}" did not answer ${what} within ${this.timeoutMs} ms`,
            504,
            'Timeout',
          ),
        );
        abandoned.abort();
      }, this.timeoutMs);
    });
    try {
      return await Promise.race([fn(abandoned.signal), timeout]);
    } catch (e) {
      throw this.toError(what, e);
    } finally {
      clearTimeout(timer);
    }
  }

  /** A plain GET of the API; abandoned (the connection closed) when the timeout expires. */
  private get<T>(what: string, path: string): Promise<T> {
    return this.call(what, signal => this.api.getJson<T>(path, signal));
  }

  private toError(what: string, e: unknown): ClusterRequestError {
    const error = this.describe(what, e);
    const provider = this.options.userTokenProvider;
    if (provider && error.statusCode === 401) {
      this.userTokenRefused ??= new ClusterRequestError(
        this.cluster,
        `your ${provider} token for cluster "${this.cluster}" expired or was refused (401 on ${what}); sign in again and re-run`,
        401,
        'Unauthorized',
      );
      return this.userTokenRefused;
    }
    return error;
  }

  private describe(what: string, e: unknown): ClusterRequestError {
    if (e instanceof ClusterRequestError) return e;
    const watchStatus = (e as { statusCode?: unknown })?.statusCode;
    if (typeof watchStatus === 'number') {
      // client-node's Watch fails with an Error carrying the status of a refused watch.
      return new ClusterRequestError(
        this.cluster,
        `cluster "${this.cluster}" refused ${what}: ${watchStatus} ${
          (e as Error).message
        }`,
        watchStatus,
        (e as Error).message.replace(/\s+/g, ''),
      );
    }
    if (e instanceof ApiException) {
      const status = statusOf(e.body);
      return new ClusterRequestError(
        this.cluster,
        `cluster "${this.cluster}" refused ${what}: ${e.code} ${
          status.reason ?? ''
        }${status.message ? ` (${status.message})` : ''}`.replace(
          /\s+\(/,
          ' (',
        ),
        e.code,
        status.reason,
      );
    }
    const cause =
      (e as { code?: string; message?: string })?.code ??
      (e as Error)?.message ??
      String(e);
    return new ClusterRequestError(
      this.cluster,
      `cluster "${this.cluster}" is unreachable for ${what}: ${cause}`,
    );
  }

  /**
   * Every page of a list, 500 objects at a time. `pick` trims each object as
   * its page arrives, so the full objects die young instead of being kept
   * (and copied by the garbage collector) until the last page.
   */
  private async listAll<T>(
    what: string,
    path: string,
    query: Record<string, string> = {},
    pick?: (item: T) => T,
  ): Promise<T[]> {
    return (await this.listPages(what, path, query, pick)).items;
  }

  private async listPages<T>(
    what: string,
    path: string,
    query: Record<string, string>,
    pick?: (item: T) => T,
  ): Promise<{ items: T[]; resourceVersion: string }> {
    const items: T[] = [];
    let cont: string | undefined;
    let resourceVersion = '';
    do {
      const params = new URLSearchParams({
        ...query,
        limit: String(this.pageSize),
        ...(cont ? { continue: cont } : {}),
      });
      const page = await this.get<{
        items: T[];
        metadata?: { continue?: string; resourceVersion?: string };
      }>(what, `${path}?${params}`);
      if (pick) for (const item of page.items) items.push(pick(item));
      else items.push(...page.items);
      // Every page of a paginated list is served at the first page's resourceVersion.
      resourceVersion ||= page.metadata?.resourceVersion ?? '';
      cont = page.metadata?.continue || undefined;
    } while (cont);
    return { items, resourceVersion };
  }

  listStatefulSets(
    labelSelector: string,
    namespace?: string,
  ): Promise<V1StatefulSet[]> {
    return this.listAll(
      'list statefulsets',
      apiPath('statefulsets', { namespace }),
      { labelSelector },
    );
  }

  readStatefulSet(namespace: string, name: string): Promise<V1StatefulSet> {
    return this.get(
      `get statefulset ${namespace}/${name}`,
      apiPath('statefulsets', { namespace, name }),
    );
  }

  /** The Namespace object, for the platform's owner annotation on it. */
  readNamespace(name: string): Promise<V1Namespace> {
    return this.get(`get namespace ${name}`, apiPath('namespaces', { name }));
  }

  /** The namespace's claims, each trimmed by `pick` if given. */
  listClaims(
    namespace: string,
    pick?: (claim: V1PersistentVolumeClaim) => V1PersistentVolumeClaim,
  ): Promise<V1PersistentVolumeClaim[]> {
    return this.listAll(
      `list persistentvolumeclaims in ${namespace}`,
      apiPath('persistentvolumeclaims', { namespace }),
      {},
      pick,
    );
  }

  /** The namespace's pods, each trimmed by `pick` if given. */
  listPods(namespace: string, pick?: (pod: V1Pod) => V1Pod): Promise<V1Pod[]> {
    return this.listAll(
      `list pods in ${namespace}`,
      apiPath('pods', { namespace }),
      {},
      pick,
    );
  }

  /**
   * The namespace's HorizontalPodAutoscalers, each trimmed by `pick` if
   * given, with the list's resourceVersion to watch them from.
   */
  listAutoscalers(
    namespace: string,
    pick?: (hpa: V2HorizontalPodAutoscaler) => V2HorizontalPodAutoscaler,
  ): Promise<{ items: V2HorizontalPodAutoscaler[]; resourceVersion: string }> {
    return this.listPages(
      `list horizontalpodautoscalers in ${namespace}`,
      apiPath('horizontalpodautoscalers', { namespace }),
      {},
      pick,
    );
  }

  /** Watches the namespace's HorizontalPodAutoscalers from a resourceVersion, with bookmarks. */
  watchAutoscalers(
    namespace: string,
    resourceVersion: string,
    onEvent: (event: WatchEvent<V2HorizontalPodAutoscaler>) => void,
    onEnd: (error?: ClusterRequestError) => void,
  ): Promise<() => void> {
    return this.watch(
      apiPath('horizontalpodautoscalers', { namespace }),
      {},
      resourceVersion,
      onEvent,
      onEnd,
    );
  }

  /** The claim, or undefined when it does not exist. */
  async readClaim(
    namespace: string,
    name: string,
  ): Promise<V1PersistentVolumeClaim | undefined> {
    return this.orUndefined(() =>
      this.get<V1PersistentVolumeClaim>(
        `get persistentvolumeclaim ${namespace}/${name}`,
        apiPath('persistentvolumeclaims', { namespace, name }),
      ),
    );
  }

  /** The volume, or undefined when it does not exist. */
  async readVolume(name: string): Promise<V1PersistentVolume | undefined> {
    return this.orUndefined(() =>
      this.get<V1PersistentVolume>(
        `get persistentvolume ${name}`,
        apiPath('persistentvolumes', { name }),
      ),
    );
  }

  /** Deletes a claim only if it still has this uid and resourceVersion (409 otherwise). */
  /**
   * Deletes a claim. `beforeSend` runs once its credentials are applied, as
   * the last step before the request leaves; if it throws, nothing is sent.
   * It goes over the connections of the reads before it (see RawApiClient).
   */
  deleteClaim(
    namespace: string,
    name: string,
    preconditions: { uid: string; resourceVersion: string },
    dryRun: boolean,
    beforeSend?: () => void,
  ): Promise<V1PersistentVolumeClaim> {
    const path = `${apiPath('persistentvolumeclaims', { namespace, name })}${
      dryRun ? '?dryRun=All' : ''
    }`;
    return this.call(
      `delete persistentvolumeclaim ${namespace}/${name}`,
      signal =>
        this.api.deleteJson<V1PersistentVolumeClaim>(
          path,
          {
            apiVersion: 'v1',
            kind: 'DeleteOptions',
            preconditions,
            propagationPolicy: 'Background',
            ...(dryRun ? { dryRun: ['All'] } : {}),
          },
          { signal, beforeSend },
        ),
    );
  }

  async readLease(
    namespace: string,
    name: string,
  ): Promise<V1Lease | undefined> {
    return this.orUndefined(() =>
      this.call(`get lease ${namespace}/${name}`, () =>
        this.coordination.readNamespacedLease({ namespace, name }),
      ),
    );
  }

  createLease(namespace: string, lease: V1Lease, dryRun = false) {
    return this.call(`create lease ${namespace}/${lease.metadata?.name}`, () =>
      this.coordination.createNamespacedLease({
        namespace,
        body: lease,
        ...(dryRun ? { dryRun: 'All' } : {}),
      }),
    );
  }

  /** Replaces a lease; the resourceVersion in it makes the write conditional. */
  replaceLease(namespace: string, lease: V1Lease) {
    const name = lease.metadata!.name!;
    return this.call(`update lease ${namespace}/${name}`, () =>
      this.coordination.replaceNamespacedLease({
        namespace,
        name,
        body: lease,
      }),
    );
  }

  deleteLease(
    namespace: string,
    name: string,
    preconditions: { uid: string; resourceVersion?: string },
  ) {
    return this.call(`delete lease ${namespace}/${name}`, () =>
      this.coordination.deleteNamespacedLease({
        namespace,
        name,
        body: { preconditions },
      }),
    );
  }

  /**
   * Watches one object from a resourceVersion, so nothing between a read and
   * the watch is missed. `onEnd` is called once when the watch ends for any reason.
   */
  watchOne<T>(
    resource: KubeResource,
    target: { namespace?: string; name: string },
    resourceVersion: string | undefined,
    onEvent: (event: WatchEvent<T>) => void,
    onEnd: (error?: ClusterRequestError) => void,
  ): Promise<() => void> {
    return this.watch(
      apiPath(resource, { namespace: target.namespace }),
      { fieldSelector: `metadata.name=${target.name}` },
      resourceVersion,
      onEvent,
      onEnd,
    );
  }

  /**
   * Every object of a collection (cluster-wide), page by page, each trimmed by
   * `pick` as its page arrives, with the list's resourceVersion to watch from.
   */
  listCollection<T>(
    resource: KubeResource,
    pick?: (item: T) => T,
  ): Promise<{ items: T[]; resourceVersion: string }> {
    const path = apiPath(resource);
    return this.listPages(`list ${path}`, path, {}, pick);
  }

  /**
   * Watches a whole collection from a resourceVersion, with bookmarks. A
   * version the server no longer has ends the watch with a 410, either as
   * the answer (`onEnd` gets statusCode 410) or as an ERROR event.
   */
  watchCollection<T>(
    resource: KubeResource,
    resourceVersion: string,
    onEvent: (event: WatchEvent<T>) => void,
    onEnd: (error?: ClusterRequestError) => void,
  ): Promise<() => void> {
    return this.watch(apiPath(resource), {}, resourceVersion, onEvent, onEnd);
  }

  private async watch<T>(
    path: string,
    query: Record<string, string>,
    resourceVersion: string | undefined,
    onEvent: (event: WatchEvent<T>) => void,
    onEnd: (error?: ClusterRequestError) => void,
  ): Promise<() => void> {
    let ended = false;
    const end = (err?: unknown) => {
      if (ended) return;
      ended = true;
      onEnd(err ? this.watchError(path, err) : undefined);
    };
    const started = this.watcher.watch(
      path,
      {
        ...query,
        allowWatchBookmarks: true,
        ...(resourceVersion ? { resourceVersion } : {}),
      },
      (type, object) =>
        onEvent({ type: type as WatchEvent<T>['type'], object: object as T }),
      err => end(err),
    );
    let controller: AbortController;
    try {
      controller = await this.call(`watch ${path}`, () => started);
    } catch (e) {
      // A watch that connects after its timeout gave up on it is closed, not leaked.
      ended = true;
      started.then(late => late.abort()).catch(() => {});
      throw e;
    }
    return () => {
      ended = true;
      controller.abort();
    };
  }

  /** client-node's watch fails a non-200 answer with a plain Error carrying statusCode. */
  private watchError(path: string, err: unknown): ClusterRequestError {
    const statusCode = (err as { statusCode?: unknown })?.statusCode;
    if (typeof statusCode === 'number' && !(err instanceof ApiException)) {
      return new ClusterRequestError(
        this.cluster,
        `cluster "${this.cluster}" refused watch ${path}: ${statusCode} ${
          (err as Error).message
        }`,
        statusCode,
      );
    }
    return this.toError(`watch ${path}`, err);
  }

  private async orUndefined<T>(fn: () => Promise<T>): Promise<T | undefined> {
    try {
      return await fn();
    } catch (e) {
      if (e instanceof ClusterRequestError && e.statusCode === 404)
        return undefined;
      throw e;
    }
  }
}
