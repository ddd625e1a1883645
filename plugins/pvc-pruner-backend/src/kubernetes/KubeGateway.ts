import { ClusterConnection } from './ClusterConnection';
import { MalformedWatchEventError, RawApiClient } from './RawApiClient';
import { apiPath, KubeResource } from './apiPath';
import {
  formatBytes,
  RESPONSE_LIMITS,
  ResponseLimits,
  ResponseTooLargeError,
} from './responseLimits';
import {
  ApiException,
  CoordinationV1Api,
  createConfiguration,
  ServerConfiguration,
  V1Lease,
  V1Namespace,
  V1PersistentVolume,
  V1PersistentVolumeClaim,
  V1Pod,
  V1StatefulSet,
  V1StorageClass,
  V2HorizontalPodAutoscaler,
  wrapHttpLibrary,
} from '@kubernetes/client-node';
import type {
  VolumeSnapshot,
  VolumeSnapshotClass,
  VolumeSnapshotContent,
} from './volumeSnapshotTypes';

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
  /** Replaces some of {@link RESPONSE_LIMITS} (tests). */
  limits?: Partial<ResponseLimits>;
}

/** Why a misbehaving cluster's answer was refused, after what it sent: the same for every limit. */
const MISBEHAVING =
  'no real API server sends that, so pvc-pruner stopped reading (check what answers at that cluster’s URL)';

/**
 * The Kubernetes calls pvc-pruner makes, for one cluster: the only place
 * that knows client-node. Every call has a timeout and fails with a
 * ClusterRequestError naming the cluster.
 */
export class KubeGateway {
  private readonly coordination: CoordinationV1Api;
  private readonly api: RawApiClient;
  private readonly pageSize: number;
  /** What this cluster may send (see {@link RESPONSE_LIMITS}). */
  readonly limits: ResponseLimits;
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
    this.limits = { ...RESPONSE_LIMITS, ...options.limits };
    this.api = new RawApiClient(connection);
    // client-node's typed client for Leases, sending through the same connections and limits.
    this.coordination = new CoordinationV1Api(
      createConfiguration({
        baseServer: new ServerConfiguration(connection.endpoint.server, {}),
        httpApi: wrapHttpLibrary(this.api.httpLibrary(this.limits.objectBytes)),
      }),
    );
  }

  /**
   * Runs a request with the cluster's timeout (or `within`, when a list's
   * deadline comes sooner); `fn` gets a signal that aborts when it expires.
   */
  private async call<T>(
    what: string,
    fn: (signal: AbortSignal) => Promise<T>,
    within?: { ms: number; message: string },
  ): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const abandoned = new AbortController();
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        // Rejected first, so the race settles as a timeout, not as the abort it causes.
        reject(
          new ClusterRequestError(
            this.cluster,
            within?.message ??
              `cluster "${this.cluster}" did not answer ${what} within ${this.timeoutMs} ms`,
            504,
            'Timeout',
          ),
        );
        abandoned.abort();
      }, within?.ms ?? this.timeoutMs);
    });
    try {
      return await Promise.race([fn(abandoned.signal), timeout]);
    } catch (e) {
      throw this.toError(what, e);
    } finally {
      clearTimeout(timer);
    }
  }

  /** A plain GET of one object; abandoned (the connection closed) when the timeout expires. */
  private get<T>(what: string, path: string): Promise<T> {
    return this.call(what, async signal => {
      const { body } = await this.api.getJson<T>(path, {
        signal,
        maxBytes: this.limits.objectBytes,
      });
      return body;
    });
  }

  /** An answer that went past one of {@link limits}; `sent` says how. */
  limitExceeded(what: string, sent: string): ClusterRequestError {
    return new ClusterRequestError(
      this.cluster,
      `cluster "${this.cluster}" ${sent} for ${what}: ${MISBEHAVING}`,
      undefined,
      'LimitExceeded',
    );
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
    if (e instanceof ResponseTooLargeError)
      return this.limitExceeded(
        what,
        e.part === 'answer'
          ? `sent an answer of more than ${formatBytes(e.limitBytes)}`
          : `sent a watch event of more than ${formatBytes(e.limitBytes)}`,
      );
    if (e instanceof MalformedWatchEventError)
      return this.limitExceeded(what, 'sent a watch event that is not JSON');
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

  /**
   * Every page of a list, within {@link limits}: a cluster that sends more
   * pages, objects or bytes than any real one, hands back a continue token it
   * gave before (the list would loop), or takes longer than the list's
   * deadline altogether (each page just within the request timeout) fails
   * with a ClusterRequestError naming the limit.
   */
  private async listPages<T>(
    what: string,
    path: string,
    query: Record<string, string>,
    pick?: (item: T) => T,
  ): Promise<{ items: T[]; resourceVersion: string }> {
    const { listPages, listItems, listBytes, listDeadlineMs, pageBytes } =
      this.limits;
    const deadline = Date.now() + listDeadlineMs;
    const late = `cluster "${this.cluster}" did not finish ${what} within ${
      listDeadlineMs / 1000
    } s, all pages together: no real API server is that slow, so pvc-pruner gave up (check what answers at that cluster’s URL)`;
    const items: T[] = [];
    const tokens = new Set<string>();
    let cont: string | undefined;
    let resourceVersion = '';
    let pages = 0;
    let bytes = 0;
    do {
      if (++pages > listPages)
        throw this.limitExceeded(what, `sent more than ${listPages} pages`);
      const left = deadline - Date.now();
      if (left <= 0)
        throw new ClusterRequestError(this.cluster, late, 504, 'Timeout');
      const params = new URLSearchParams({
        ...query,
        limit: String(this.pageSize),
        ...(cont ? { continue: cont } : {}),
      });
      const page = await this.call(
        what,
        signal =>
          this.api.getJson<{
            items?: T[] | null;
            metadata?: { continue?: string; resourceVersion?: string };
          }>(`${path}?${params}`, { signal, maxBytes: pageBytes }),
        left < this.timeoutMs ? { ms: left, message: late } : undefined,
      );
      bytes += page.bytes;
      if (bytes > listBytes)
        throw this.limitExceeded(
          what,
          `sent more than ${formatBytes(listBytes)}`,
        );
      const pageItems = page.body.items ?? [];
      if (!Array.isArray(pageItems))
        throw this.limitExceeded(
          what,
          'sent a list page without an items array',
        );
      if (items.length + pageItems.length > listItems)
        throw this.limitExceeded(
          what,
          `sent more than ${listItems.toLocaleString('en-US')} objects`,
        );
      if (pick) for (const item of pageItems) items.push(pick(item));
      else for (const item of pageItems) items.push(item);
      // Every page of a paginated list is served at the first page's resourceVersion.
      resourceVersion ||= page.body.metadata?.resourceVersion ?? '';
      cont = page.body.metadata?.continue || undefined;
      if (cont !== undefined) {
        if (tokens.has(cont))
          throw this.limitExceeded(
            what,
            'handed back a continue token it had already given (the list would never end)',
          );
        tokens.add(cont);
      }
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

  /**
   * A StatefulSet, with a resourceVersion to watch it from: that of a list
   * of it alone, which the server can watch from. Its own is older than the
   * server keeps once nothing changed it since a compaction, and a watch
   * from it fails ("too old resource version") on every try. When there is
   * none of that name it throws a 404, as a read does.
   */
  async readStatefulSetToWatch(
    namespace: string,
    name: string,
  ): Promise<{ statefulSet: V1StatefulSet; resourceVersion: string }> {
    const what = `list statefulset ${namespace}/${name}`;
    const { items, resourceVersion } = await this.listPages<V1StatefulSet>(
      what,
      apiPath('statefulsets', { namespace }),
      { fieldSelector: `metadata.name=${name}` },
    );
    // Without one, the watch would start from now, and a change made since the read would go unseen.
    if (!resourceVersion)
      throw this.limitExceeded(
        what,
        'answered a list without a resourceVersion to watch from',
      );
    const statefulSet = items.find(
      s => s.metadata?.name === name && s.metadata?.namespace === namespace,
    );
    if (!statefulSet)
      throw new ClusterRequestError(
        this.cluster,
        `cluster "${this.cluster}" refused ${what}: 404 NotFound (statefulsets.apps "${name}" not found)`,
        404,
        'NotFound',
      );
    return { statefulSet, resourceVersion };
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

  /** The claims a label selector matches, in one namespace or all, each trimmed by `pick` if given. */
  listClaimsMatching(
    labelSelector: string,
    namespace?: string,
    pick?: (claim: V1PersistentVolumeClaim) => V1PersistentVolumeClaim,
  ): Promise<V1PersistentVolumeClaim[]> {
    return this.listAll(
      `list persistentvolumeclaims${namespace ? ` in ${namespace}` : ''}`,
      apiPath('persistentvolumeclaims', { namespace }),
      { labelSelector },
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

  /** Creates a claim in its namespace (a 409 when one of that name exists). */
  createClaim(
    namespace: string,
    claim: V1PersistentVolumeClaim,
  ): Promise<V1PersistentVolumeClaim> {
    return this.call(
      `create persistentvolumeclaim ${namespace}/${claim.metadata?.name ?? ''}`,
      signal =>
        this.api.postJson<V1PersistentVolumeClaim>(
          apiPath('persistentvolumeclaims', { namespace }),
          claim,
          { signal, maxBytes: this.limits.objectBytes },
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
          { signal, beforeSend, maxBytes: this.limits.objectBytes },
        ),
    );
  }

  /**
   * Sets a volume's reclaim policy to Delete by a merge patch carrying its
   * uid and resourceVersion: the API server answers 409 when the volume
   * changed since it was read. `beforeSend` as for `deleteClaim`.
   */
  patchVolumeReclaimPolicyToDelete(
    name: string,
    preconditions: { uid: string; resourceVersion: string },
    dryRun: boolean,
    beforeSend?: () => void,
  ): Promise<V1PersistentVolume> {
    const path = `${apiPath('persistentvolumes', { name })}${
      dryRun ? '?dryRun=All' : ''
    }`;
    return this.call(`patch persistentvolume ${name}`, signal =>
      this.api.mergePatchJson<V1PersistentVolume>(
        path,
        {
          metadata: preconditions,
          spec: { persistentVolumeReclaimPolicy: 'Delete' },
        },
        { signal, beforeSend, maxBytes: this.limits.objectBytes },
      ),
    );
  }

  /** The StorageClass, or undefined when it does not exist. */
  async readStorageClass(name: string): Promise<V1StorageClass | undefined> {
    return this.orUndefined(() =>
      this.get<V1StorageClass>(
        `get storageclass ${name}`,
        apiPath('storageclasses', { name }),
      ),
    );
  }

  /** Every VolumeSnapshotClass of the cluster (few: one or two per CSI driver). */
  listVolumeSnapshotClasses(): Promise<VolumeSnapshotClass[]> {
    return this.listAll(
      'list volumesnapshotclasses',
      apiPath('volumesnapshotclasses'),
    );
  }

  /** Creates a VolumeSnapshot in its namespace; with dryRun, validated and admitted only (`dryRun=All`). */
  createVolumeSnapshot(
    namespace: string,
    snapshot: VolumeSnapshot,
    dryRun: boolean,
  ): Promise<VolumeSnapshot> {
    const name = snapshot.metadata?.name ?? '';
    const path = `${apiPath('volumesnapshots', { namespace })}${
      dryRun ? '?dryRun=All' : ''
    }`;
    return this.call(`create volumesnapshot ${namespace}/${name}`, signal =>
      this.api.postJson<VolumeSnapshot>(path, snapshot, {
        signal,
        maxBytes: this.limits.objectBytes,
      }),
    );
  }

  /**
   * The VolumeSnapshots of a namespace (of every namespace without one) that
   * `labelSelector` selects, within the list limits.
   */
  listVolumeSnapshots(
    namespace: string | undefined,
    labelSelector: string,
  ): Promise<VolumeSnapshot[]> {
    return this.listAll(
      `list volumesnapshots${namespace ? ` in ${namespace}` : ''}`,
      apiPath('volumesnapshots', { namespace }),
      { labelSelector },
    );
  }

  /** The VolumeSnapshot, or undefined when it does not exist. */
  async readVolumeSnapshot(
    namespace: string,
    name: string,
  ): Promise<VolumeSnapshot | undefined> {
    return this.orUndefined(() =>
      this.get<VolumeSnapshot>(
        `get volumesnapshot ${namespace}/${name}`,
        apiPath('volumesnapshots', { namespace, name }),
      ),
    );
  }

  /** Deletes a VolumeSnapshot only if it still has this uid (and resourceVersion, when given): 409 otherwise. */
  deleteVolumeSnapshot(
    namespace: string,
    name: string,
    preconditions: { uid: string; resourceVersion?: string },
  ): Promise<VolumeSnapshot> {
    return this.call(`delete volumesnapshot ${namespace}/${name}`, signal =>
      this.api.deleteJson<VolumeSnapshot>(
        apiPath('volumesnapshots', { namespace, name }),
        {
          apiVersion: 'v1',
          kind: 'DeleteOptions',
          preconditions,
          propagationPolicy: 'Background',
        },
        { signal, maxBytes: this.limits.objectBytes },
      ),
    );
  }

  /**
   * Sets (or, with null, removes) annotations of a VolumeSnapshot by a merge
   * patch carrying its uid and resourceVersion: the API server answers 409
   * when the snapshot changed since it was read.
   */
  patchVolumeSnapshotAnnotations(
    namespace: string,
    name: string,
    preconditions: { uid: string; resourceVersion: string },
    annotations: Record<string, string | null>,
  ): Promise<VolumeSnapshot> {
    return this.call(`patch volumesnapshot ${namespace}/${name}`, signal =>
      this.api.mergePatchJson<VolumeSnapshot>(
        apiPath('volumesnapshots', { namespace, name }),
        { metadata: { ...preconditions, annotations } },
        { signal, maxBytes: this.limits.objectBytes },
      ),
    );
  }

  /** The VolumeSnapshotContent, or undefined when it does not exist. */
  async readVolumeSnapshotContent(
    name: string,
  ): Promise<VolumeSnapshotContent | undefined> {
    return this.orUndefined(() =>
      this.get<VolumeSnapshotContent>(
        `get volumesnapshotcontent ${name}`,
        apiPath('volumesnapshotcontents', { name }),
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

  /**
   * Opens a watch. A cluster that refuses it or cannot be reached ends it at
   * once, through `onEnd`; one that does not answer within the timeout is a
   * rejection. Each event is at most `limits.watchEventBytes`: a longer one
   * (or an endless line) ends the watch with a ClusterRequestError, as does a
   * line that is not JSON.
   */
  private async watch<T>(
    path: string,
    query: Record<string, string>,
    resourceVersion: string | undefined,
    onEvent: (event: WatchEvent<T>) => void,
    onEnd: (error?: ClusterRequestError) => void,
  ): Promise<() => void> {
    const what = `watch ${path}`;
    const params = new URLSearchParams({
      ...query,
      watch: 'true',
      allowWatchBookmarks: 'true',
      ...(resourceVersion ? { resourceVersion } : {}),
    });
    const stream = new AbortController();
    let ended = false;
    const end = (err?: unknown) => {
      if (ended) return;
      ended = true;
      stream.abort();
      onEnd(err ? this.toError(what, err) : undefined);
    };
    let timedOut = false;
    try {
      await this.call(what, signal => {
        signal.addEventListener('abort', () => {
          timedOut = true;
          stream.abort();
        });
        return this.api.watch(`${path}?${params}`, {
          signal: stream.signal,
          maxLineBytes: this.limits.watchEventBytes,
          maxBytes: this.limits.objectBytes,
          onEvent: event => {
            if (!ended) onEvent(event as WatchEvent<T>);
          },
          onEnd: end,
        });
      });
    } catch (e) {
      // A watch that connects after its timeout gave up on it is closed, not leaked.
      if (timedOut) {
        ended = true;
        throw e;
      }
      end(e);
    }
    return () => {
      ended = true;
      stream.abort();
    };
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
