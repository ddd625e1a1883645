import { IncomingMessage, ServerResponse } from 'node:http';
import {
  IdentityEndpoint,
  RbacAuthorizer,
  RequestAuthenticator,
  RequestUser,
  UnauthenticatedError,
} from './auth';
import { ApiError, errors } from './errors';
import { Faults } from './faults';
import { ApiHistory, historyNow } from './history';
import { bodyFormat, parseBody, readBody } from './http/body';
import {
  apiGroup,
  apiGroupList,
  apiResourceList,
  apiVersions,
  KUBERNETES_VERSION,
} from './http/discovery';
import { openApiV3Document, openApiV3Index } from './http/openapi';
import { handleResource, verbOf } from './http/resourceHandler';
import { parseResourcePath, ResourceRoute } from './http/route';
import { IncludeObject, toTable } from './http/table';
import {
  serveWatch,
  serveWatchError,
  WatchRegistry,
  WatchSettings,
} from './http/watch';
import { ObjectStore } from './store';
import { KubeObject } from './types';

export interface AdminHandler {
  (req: {
    method: string;
    path: string;
    body: unknown;
    query: URLSearchParams;
  }): unknown;
}

export interface ServerContext {
  store: ObjectStore;
  authenticator: RequestAuthenticator;
  authorizer: RbacAuthorizer;
  faults: Faults;
  /** Records what was served, for an oracle (see history.ts). */
  history?: ApiHistory;
  watches: WatchRegistry;
  settings: WatchSettings;
  /** Answers /_sim/... for admin tokens. */
  admin: AdminHandler;
  isAdmin: (user: RequestUser) => boolean;
  /** Identity-provider endpoints (Azure authority, Google STS, AWS STS) served without Kubernetes authentication. */
  identityEndpoints: IdentityEndpoint[];
  serverAddress: () => string;
}

const UNAUTHENTICATED = new Set(['/version', '/healthz', '/livez', '/readyz']);

function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  contentType = 'application/json',
  warnings: string[] = [],
) {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  const retryAfter = (body as { details?: { retryAfterSeconds?: number } })
    ?.details?.retryAfterSeconds;
  res.writeHead(status, {
    'Content-Type': contentType,
    'Content-Length': Buffer.byteLength(text),
    ...(retryAfter ? { 'Retry-After': String(retryAfter) } : {}),
    ...(warnings.length
      ? { Warning: warnings.map(w => `299 - ${JSON.stringify(w)}`) }
      : {}),
  });
  res.end(text);
}

function tableRequested(accept: string | undefined) {
  return /as=Table/.test(accept ?? '');
}

function includeObjectOf(query: URLSearchParams): IncludeObject {
  const value = query.get('includeObject') ?? 'Metadata';
  if (!['None', 'Metadata', 'Object'].includes(value))
    throw errors.badRequest(`includeObject: Unsupported value: "${value}"`);
  return value as IncludeObject;
}

function discovery(path: string, ctx: ServerContext): unknown {
  const segments = path.split('/').filter(Boolean);
  if (path === '/api') return apiVersions(ctx.serverAddress());
  if (path === '/apis') return apiGroupList();
  if (segments[0] === 'api' && segments.length === 2)
    return apiResourceList('', segments[1]);
  if (segments[0] === 'apis' && segments.length === 2)
    return apiGroup(segments[1]);
  if (segments[0] === 'apis' && segments.length === 3)
    return apiResourceList(segments[1], segments[2]);
  if (path === '/openapi/v3') return openApiV3Index();
  if (segments[0] === 'openapi' && segments[1] === 'v3')
    return openApiV3Document(segments.slice(2).join('/'));
  return undefined;
}

async function serveResource(
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  route: ResourceRoute,
  user: RequestUser,
  ctx: ServerContext,
  log: {
    verb: string;
    resource?: string;
    namespace?: string;
    receivedAt?: number;
  },
) {
  const verb = verbOf(req.method ?? 'GET', route, url.searchParams);
  // metrics-server answers get and list only.
  if (route.type.computed && verb !== 'get' && verb !== 'list')
    throw errors.methodNotAllowed(verb);
  const resource = route.subresource
    ? `${route.type.plural}/${route.subresource}`
    : route.type.plural;
  Object.assign(log, { verb, resource, namespace: route.namespace });
  ctx.authorizer.authorize(user, {
    verb,
    apiGroup: route.type.group,
    resource,
    namespace: route.namespace,
    name: route.name,
  });

  const fault = ctx.faults.evaluate({
    verb,
    resource,
    namespace: route.namespace,
  });
  if (fault.delayMs > 0)
    await new Promise(resolve => setTimeout(resolve, fault.delayMs));
  if (fault.error) {
    // An expired watch is never an HTTP 410 on a real server (see serveWatchError).
    if (verb === 'watch' && fault.error.code === 410) {
      serveWatchError(res, fault.error);
      return 200;
    }
    throw fault.error;
  }

  const hasBody = ['POST', 'PUT', 'PATCH', 'DELETE'].includes(req.method ?? '');
  const raw = hasBody ? await readBody(req) : Buffer.alloc(0);
  const format =
    hasBody && raw.length > 0
      ? bodyFormat(req.headers['content-type'])
      : 'json';
  const body = raw.length > 0 ? parseBody(raw, format) : undefined;
  const asTable = tableRequested(req.headers.accept);
  const include = asTable ? includeObjectOf(url.searchParams) : 'Object';
  const kind = route.subresource === 'scale' ? 'Scale' : route.type.kind;
  const render = (o: KubeObject) => (asTable ? toTable(kind, [o], include) : o);
  const given = body as
    | {
        metadata?: { name?: string };
        dryRun?: unknown;
        preconditions?: { uid?: string; resourceVersion?: string };
      }
    | undefined;
  const seq = ctx.history?.arrived(
    {
      receivedAt: log.receivedAt,
      injectedLatencyMs: fault.delayMs,
      user: user.info.name,
      userAgent: req.headers['user-agent'],
      verb,
      resource,
      namespace: route.namespace,
      name: route.name ?? given?.metadata?.name,
      dryRun: url.searchParams.has('dryRun') || Array.isArray(given?.dryRun),
    },
    given?.preconditions,
  );

  if (verb === 'watch') {
    serveWatch({
      store: ctx.store,
      route,
      query: url.searchParams,
      res,
      registry: ctx.watches,
      settings: ctx.settings,
      render,
    });
    if (seq !== undefined) ctx.history!.served(seq, 200);
    return 200;
  }
  let result;
  try {
    result = handleResource(ctx.store, {
      route,
      verb,
      query: url.searchParams,
      body,
      bodyFormat: format,
    });
  } catch (e) {
    if (seq !== undefined)
      ctx.history!.served(seq, e instanceof ApiError ? e.code : 500);
    throw e;
  }
  if (seq !== undefined) ctx.history!.served(seq, result.status);
  if (asTable && (verb === 'get' || verb === 'list')) {
    const items = result.items ?? [result.body as KubeObject];
    const meta =
      (
        result.body as {
          metadata?: { resourceVersion?: string; continue?: string };
        }
      ).metadata ?? {};
    sendJson(
      res,
      result.status,
      toTable(
        kind,
        items,
        include,
        verb === 'list'
          ? { resourceVersion: meta.resourceVersion, continue: meta.continue }
          : {},
      ),
    );
  } else {
    sendJson(
      res,
      result.status,
      result.body,
      'application/json',
      result.warnings,
    );
  }
  return result.status;
}

async function serveIdentityEndpoint(
  req: IncomingMessage,
  endpoint: IdentityEndpoint,
  paths: { path: string; rawPath: string },
  res: ServerResponse,
) {
  const method = req.method ?? 'GET';
  const { path, rawPath } = paths;
  const body = method === 'POST' ? await readBody(req) : Buffer.alloc(0);
  const answer = await endpoint.handle({
    method,
    path,
    rawPath,
    body,
    form: new URLSearchParams(body.toString('utf8')),
    headers: req.headers,
  });
  if (!answer) throw errors.pathNotFound(path);
  sendJson(res, answer.status, answer.body, answer.contentType);
  return answer.status;
}

/** The request handler of the simulated kube-apiserver. */
export function createRequestHandler(ctx: ServerContext) {
  return async (req: IncomingMessage, res: ServerResponse) => {
    const started = process.hrtime.bigint();
    const url = new URL(req.url ?? '/', 'http://kube-sim');
    const path = url.pathname.replace(/\/+$/, '') || '/';
    const log: {
      verb: string;
      resource?: string;
      namespace?: string;
      user?: string;
      authError?: string;
      receivedAt?: number;
    } = {
      verb: (req.method ?? 'GET').toLowerCase(),
      receivedAt: ctx.history ? historyNow() : undefined,
    };
    let status = 200;
    try {
      const identityEndpoint = ctx.identityEndpoints.find(
        e => path === e.prefix || path.startsWith(`${e.prefix}/`),
      );
      if (identityEndpoint) {
        status = await serveIdentityEndpoint(
          req,
          identityEndpoint,
          { path, rawPath: url.pathname },
          res,
        );
      } else if (UNAUTHENTICATED.has(path) && req.method === 'GET') {
        sendJson(
          res,
          200,
          path === '/version' ? KUBERNETES_VERSION : 'ok',
          path === '/version' ? 'application/json' : 'text/plain',
        );
      } else {
        const user = await ctx.authenticator.authenticate(req);
        log.user = user.info.name;
        const route = parseResourcePath(path);
        if (route) {
          status = await serveResource(req, res, url, route, user, ctx, log);
        } else if (path.startsWith('/_sim/')) {
          if (!ctx.isAdmin(user))
            throw errors.forbidden(user.info.name, req.method ?? 'GET', {
              group: '',
              kind: 'kube-sim admin',
            });
          const raw = await readBody(req);
          const body = raw.length ? parseBody(raw, 'json') : undefined;
          const answer = await ctx.admin({
            method: req.method ?? 'GET',
            path: path.slice('/_sim'.length),
            body,
            query: url.searchParams,
          });
          if (answer === undefined) throw errors.pathNotFound(path);
          sendJson(res, 200, answer);
        } else {
          const answer =
            req.method === 'GET' ? discovery(path, ctx) : undefined;
          if (answer === undefined) throw errors.pathNotFound(path);
          sendJson(res, 200, answer);
        }
      }
    } catch (e) {
      const error =
        e instanceof ApiError ? e : errors.internal((e as Error).message);
      if (!(e instanceof ApiError))
        process.emitWarning(`kube-sim: ${(e as Error).stack}`);
      status = error.code;
      if (e instanceof UnauthenticatedError)
        log.authError = e.reasons.join('; ') || 'no credentials';
      if (res.headersSent) res.end();
      else sendJson(res, error.code, error.toStatus());
    } finally {
      ctx.faults.record({
        time: new Date().toISOString(),
        user: log.user,
        ...(log.authError ? { authError: log.authError } : {}),
        verb: log.verb,
        method: req.method ?? 'GET',
        path,
        query: url.search,
        resource: log.resource,
        namespace: log.namespace,
        status,
        durationMs: Number(process.hrtime.bigint() - started) / 1e6,
      });
    }
  };
}
