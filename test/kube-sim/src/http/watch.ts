import { ServerResponse } from 'node:http';
import { ApiError, errors } from '../errors';
import { apiVersionOf, resourceKey } from '../resources';
import { fieldMatcher } from '../fieldSelectors';
import { labelMatcher } from '../selectors';
import { ObjectStore } from '../store';
import { KubeObject, StoreEvent } from '../types';
import { ResourceRoute } from './route';

export interface WatchSettings {
  /** Real milliseconds between BOOKMARK events when the client allows them. */
  bookmarkIntervalMs: number;
  /** Used when the client gives no timeoutSeconds (kube-apiserver picks 30–60 minutes). */
  defaultTimeoutSeconds: number;
}

/** Open watches, so they can be counted and dropped (fault injection). */
export class WatchRegistry {
  private readonly open = new Set<() => void>();

  add(close: () => void) {
    this.open.add(close);
    return () => this.open.delete(close);
  }

  get count() {
    return this.open.size;
  }

  /** Ends every open watch, as an apiserver restart or a load balancer would. */
  dropAll(): number {
    const closers = [...this.open];
    closers.forEach(close => close());
    return closers.length;
  }
}

const WATCH_HEADERS = {
  'Content-Type': 'application/json',
  'Transfer-Encoding': 'chunked',
  'Cache-Control': 'no-cache',
};

/**
 * Answers a watch that cannot be served as kube-apiserver does once the
 * request is admitted and its resourceVersion parsed: 200, one ERROR event
 * holding the Status, and the end of the stream. Both the watch cache
 * (cacher.go, "other errors must fail with a watch event of type ERROR") and
 * the etcd3 watcher (transformErrorToEvent) answer "too old" this way.
 */
export function serveWatchError(res: ServerResponse, error: ApiError) {
  res.writeHead(200, WATCH_HEADERS);
  res.end(`${JSON.stringify({ type: 'ERROR', object: error.toStatus() })}\n`);
}

/**
 * Serves a watch: validates and replays synchronously, then streams
 * newline-delimited watch events until the timeout, the client leaving, or a
 * drop. A malformed request is an HTTP error; a resourceVersion older than the
 * history is a 200 whose only event is an ERROR Status 410 Expired.
 */
export function serveWatch(options: {
  store: ObjectStore;
  route: ResourceRoute;
  query: URLSearchParams;
  res: ServerResponse;
  registry: WatchRegistry;
  settings: WatchSettings;
  render: (object: KubeObject) => unknown;
}) {
  const { store, route, query, res, registry, settings, render } = options;
  const key = resourceKey(route.type);
  const labels = labelMatcher(query.get('labelSelector') ?? undefined);
  const fields = fieldMatcher(query.get('fieldSelector') ?? undefined, key);
  const timeoutSeconds = query.has('timeoutSeconds')
    ? Number(query.get('timeoutSeconds'))
    : settings.defaultTimeoutSeconds;
  if (!Number.isFinite(timeoutSeconds) || timeoutSeconds < 0)
    throw errors.badRequest('timeoutSeconds must be a non-negative number');
  const sendInitialEvents = query.get('sendInitialEvents') === 'true';
  const bookmarks =
    query.get('allowWatchBookmarks') === 'true' || sendInitialEvents;
  let resourceVersion = query.get('resourceVersion') ?? undefined;
  if (sendInitialEvents) resourceVersion = '0';

  const buffered: string[] = [];
  let started = false;
  const write = (type: string, object: unknown) => {
    const line = `${JSON.stringify({ type, object })}\n`;
    if (started) res.write(line);
    else buffered.push(line);
  };
  const onEvent = (event: StoreEvent) =>
    write(event.type, render(event.object));
  let stop: () => void;
  try {
    stop = store.watch(
      key,
      {
        namespace: route.type.namespaced ? route.namespace : undefined,
        filter: o => labels(o.metadata.labels) && fields(o),
        resourceVersion,
      },
      onEvent,
    );
  } catch (e) {
    if (!(e instanceof ApiError) || e.code !== 410) throw e;
    serveWatchError(res, e);
    return;
  }
  const bookmark = (annotations?: Record<string, string>) =>
    write('BOOKMARK', {
      kind: route.type.kind,
      apiVersion: apiVersionOf(route.type),
      metadata: {
        resourceVersion: store.resourceVersion,
        ...(annotations ? { annotations } : {}),
      },
    });
  if (sendInitialEvents) bookmark({ 'k8s.io/initial-events-end': 'true' });

  res.writeHead(200, WATCH_HEADERS);
  res.flushHeaders();
  started = true;
  for (const line of buffered) res.write(line);

  const timers: NodeJS.Timeout[] = [];
  let closed = false;
  let unregister = () => {};
  const close = () => {
    if (closed) return;
    closed = true;
    stop();
    unregister();
    timers.forEach(clearTimeout);
    timers.forEach(t => clearInterval(t));
    res.end();
  };
  unregister = registry.add(close);
  if (timeoutSeconds > 0) timers.push(setTimeout(close, timeoutSeconds * 1000));
  if (bookmarks)
    timers.push(setInterval(() => bookmark(), settings.bookmarkIntervalMs));
  res.on('close', close);
  res.on('error', close);
}
