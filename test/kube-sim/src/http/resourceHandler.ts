import { ApiError, errors } from '../errors';
import { jsonPatch, mergePatch, strategicMergePatch } from '../patch';
import { apiVersionOf, resourceKey } from '../resources';
import { fieldMatcher } from '../fieldSelectors';
import { labelMatcher } from '../selectors';
import { ObjectStore } from '../store';
import { DeleteOptions, KubeObject } from '../types';
import { BodyFormat } from './body';
import { handlePodMetrics } from './podMetrics';
import { PROTOBUF_CONTENT_TYPE } from './protobuf';
import { ResourceRoute } from './route';
import { SNAPSHOT_SCHEMAS } from '../snapshots/schemas';
import { unknownFields } from '../snapshots/structuralSchema';

export interface ResourceRequest {
  route: ResourceRoute;
  verb: string;
  query: URLSearchParams;
  body: unknown;
  bodyFormat: BodyFormat;
}

export interface HandlerResult {
  status: number;
  body: unknown;
  /** Set for lists, so the response can be rendered as a Table. */
  items?: KubeObject[];
  /** Sent as `Warning: 299 - "…"` headers (kubectl prints them). */
  warnings?: string[];
}

/** The verb RBAC sees for a request. */
export function verbOf(
  method: string,
  route: ResourceRoute,
  query: URLSearchParams,
): string {
  const watch = query.get('watch') === 'true' || query.get('watch') === '1';
  switch (method) {
    case 'GET':
      if (watch) return 'watch';
      return route.name ? 'get' : 'list';
    case 'POST':
      if (route.name) throw errors.methodNotAllowed(method);
      return 'create';
    case 'PUT':
      if (!route.name) throw errors.methodNotAllowed(method);
      return 'update';
    case 'PATCH':
      if (!route.name) throw errors.methodNotAllowed(method);
      return 'patch';
    case 'DELETE':
      return route.name ? 'delete' : 'deletecollection';
    default:
      throw errors.methodNotAllowed(method);
  }
}

function dryRunOf(query: URLSearchParams, body?: any): boolean {
  const values = [
    ...query.getAll('dryRun'),
    ...(Array.isArray(body?.dryRun) ? body.dryRun : []),
  ];
  for (const v of values) {
    if (v !== 'All')
      throw errors.badRequest(
        `dryRun: Unsupported value: "${v}": supported values: "All"`,
      );
  }
  return values.length > 0;
}

const FIELD_VALIDATION = ['Ignore', 'Warn', 'Strict'];

/**
 * fieldValidation for a custom resource's write: unknown fields refuse the
 * request (Strict), come back as warnings (Warn, the default) or are dropped
 * silently (Ignore); admission prunes them in the last two cases.
 */
function unknownFieldWarnings(
  route: ResourceRoute,
  query: URLSearchParams,
  obj: KubeObject,
): string[] {
  const mode = query.get('fieldValidation') ?? 'Warn';
  if (!FIELD_VALIDATION.includes(mode))
    throw errors.badRequest(
      `fieldValidation: Unsupported value: "${mode}": supported values: "Ignore", "Warn", "Strict"`,
    );
  if (!route.type.customResource) return [];
  const unknown = unknownFields(SNAPSHOT_SCHEMAS[route.type.kind], obj).map(
    f => `unknown field "${f}"`,
  );
  const { kind, version } = route.type;
  if (mode === 'Strict' && unknown.length > 0)
    throw errors.badRequest(
      `${kind} in version "${version}" cannot be handled as a ${kind}: strict decoding error: ${unknown.join(
        ', ',
      )}`,
    );
  return mode === 'Warn' ? unknown : [];
}

function asObject(body: unknown, route: ResourceRoute): KubeObject {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw errors.badRequest(
      `the body of the request must be a ${route.type.kind} object`,
    );
  }
  const obj = body as KubeObject;
  if (
    obj.kind !== undefined &&
    obj.kind !== route.type.kind &&
    !(route.subresource === 'scale' && obj.kind === 'Scale')
  ) {
    throw errors.badRequest(
      `the API version in the data (${obj.apiVersion}) and kind (${obj.kind}) do not match the resource ${route.type.plural}`,
    );
  }
  if (
    obj.metadata !== undefined &&
    (typeof obj.metadata !== 'object' || obj.metadata === null)
  ) {
    throw errors.badRequest('metadata must be an object');
  }
  // As kube-apiserver's decoder: null is the zero value, any other non-object is a decode error (400).
  for (const field of ['spec', 'status'] as const) {
    const value = obj[field];
    if (value === null) {
      delete obj[field];
    } else if (
      value !== undefined &&
      (typeof value !== 'object' || Array.isArray(value))
    ) {
      throw errors.badRequest(
        `json: cannot unmarshal ${
          Array.isArray(value) ? 'array' : typeof value
        } into Go struct field ${route.type.kind}.${field}`,
      );
    }
  }
  return obj;
}

function checkNamespace(route: ResourceRoute, obj: KubeObject) {
  if (!route.type.namespaced) return;
  const given = obj.metadata?.namespace;
  if (given && given !== route.namespace) {
    throw errors.badRequest(
      'the namespace of the provided object does not match the namespace sent on the request',
    );
  }
  obj.metadata = { ...obj.metadata, namespace: route.namespace! };
}

function toScale(sts: KubeObject) {
  const matchLabels = sts.spec?.selector?.matchLabels ?? {};
  return {
    kind: 'Scale',
    apiVersion: 'autoscaling/v1',
    metadata: {
      name: sts.metadata.name,
      namespace: sts.metadata.namespace,
      uid: sts.metadata.uid,
      resourceVersion: sts.metadata.resourceVersion,
      creationTimestamp: sts.metadata.creationTimestamp,
    },
    spec: { replicas: sts.spec?.replicas ?? 0 },
    status: {
      replicas: sts.status?.replicas ?? 0,
      selector: Object.entries(matchLabels)
        .map(([k, v]) => `${k}=${v}`)
        .join(','),
    },
  };
}

function applyPatch(
  current: unknown,
  patch: unknown,
  format: BodyFormat,
): unknown {
  switch (format) {
    case 'merge-patch':
      return mergePatch(current, patch);
    case 'strategic-merge-patch':
      return strategicMergePatch(current, patch);
    case 'json-patch':
      return jsonPatch(current, patch);
    case 'apply-patch':
      throw errors.unsupportedMediaType(
        'application/apply-patch+yaml (server-side apply is not supported by kube-sim)',
      );
    default:
      throw errors.unsupportedMediaType('a patch needs a patch content type');
  }
}

function deleteOptionsOf(query: URLSearchParams, body: any): DeleteOptions {
  const options: DeleteOptions = {};
  if (body !== undefined && (typeof body !== 'object' || body === null)) {
    throw errors.badRequest('DeleteOptions must be an object');
  }
  const grace =
    body?.gracePeriodSeconds ??
    (query.has('gracePeriodSeconds')
      ? Number(query.get('gracePeriodSeconds'))
      : undefined);
  if (grace !== undefined) {
    if (!Number.isInteger(grace))
      throw errors.badRequest('gracePeriodSeconds must be an integer');
    options.gracePeriodSeconds = grace;
  }
  const policy =
    body?.propagationPolicy ?? query.get('propagationPolicy') ?? undefined;
  if (body?.orphanDependents === true && policy === undefined)
    options.propagationPolicy = 'Orphan';
  if (policy !== undefined) {
    if (!['Background', 'Foreground', 'Orphan'].includes(policy)) {
      throw errors.badRequest(
        `propagationPolicy: Unsupported value: "${policy}": supported values: "Foreground", "Background", "Orphan"`,
      );
    }
    options.propagationPolicy = policy;
  }
  if (body?.preconditions) options.preconditions = body.preconditions;
  options.dryRun = dryRunOf(query, body);
  return options;
}

/** get, list, create, update, patch, delete and deletecollection for one request (watch lives in watch.ts). */
export function handleResource(
  store: ObjectStore,
  req: ResourceRequest,
): HandlerResult {
  const { route, query } = req;
  const key = resourceKey(route.type);
  const ns = route.type.namespaced ? route.namespace : undefined;
  if (route.type.computed) return handlePodMetrics(store, req);
  if (route.type.listOnly && req.verb !== 'get' && req.verb !== 'list') {
    const resource = route.type.group
      ? `${route.type.plural}.${route.type.group}`
      : route.type.plural;
    throw errors.readOnlyResource(req.verb, resource);
  }
  if (route.type.readOnly && req.verb !== 'get' && req.verb !== 'list')
    throw errors.builtInResource(
      req.verb,
      `${route.type.plural}.${route.type.group}`,
    );
  if (route.subresource === 'log') {
    if (req.verb !== 'get') throw errors.methodNotAllowed(req.verb);
    store.require(key, ns, route.name!);
    throw errors.noLogs(ns!, route.name!);
  }

  switch (req.verb) {
    case 'get': {
      const obj = store.require(key, ns, route.name!);
      return {
        status: 200,
        body: route.subresource === 'scale' ? toScale(obj) : obj,
      };
    }
    case 'list': {
      const fields = fieldMatcher(query.get('fieldSelector') ?? undefined, key);
      const limit = query.has('limit') ? Number(query.get('limit')) : undefined;
      if (limit !== undefined && (!Number.isInteger(limit) || limit < 0))
        throw errors.badRequest('limit must be a non-negative integer');
      const result = store.list(key, {
        namespace: ns,
        labelSelector: query.get('labelSelector') ?? undefined,
        filter: fields,
        limit,
        continueToken: query.get('continue') ?? undefined,
      });
      return {
        status: 200,
        items: result.items,
        body: {
          kind: `${route.type.kind}List`,
          apiVersion: apiVersionOf(route.type),
          metadata: {
            resourceVersion: result.resourceVersion,
            ...(result.continueToken
              ? {
                  continue: result.continueToken,
                  remainingItemCount: result.remainingItemCount,
                }
              : {}),
          },
          items: result.items,
        },
      };
    }
    case 'create': {
      const obj = asObject(req.body, route);
      checkNamespace(route, obj);
      const warnings = unknownFieldWarnings(route, query, obj);
      return {
        status: 201,
        body: store.create(key, obj, { dryRun: dryRunOf(query) }),
        warnings,
      };
    }
    case 'update':
    case 'patch': {
      // The decoder knows the fields a create needs, not all of an object's: an update would drop the rest.
      if (req.bodyFormat === 'protobuf')
        throw new ApiError(
          415,
          'UnsupportedMediaType',
          `kube-sim takes ${PROTOBUF_CONTENT_TYPE} bodies for create and delete only; send an update as application/json`,
        );
      const current = store.require(key, ns, route.name!);
      const dryRun = dryRunOf(query);
      let desired: KubeObject;
      if (route.subresource === 'scale') {
        const before = toScale(current);
        const scale =
          req.verb === 'patch'
            ? (applyPatch(before, req.body, req.bodyFormat) as any)
            : asObject(req.body, route);
        const replicas = scale?.spec?.replicas;
        const rv = scale?.metadata?.resourceVersion;
        desired = {
          ...current,
          metadata: {
            ...current.metadata,
            resourceVersion: rv || current.metadata.resourceVersion,
          },
          spec: { ...current.spec, replicas },
        };
        return {
          status: 200,
          body: toScale(store.update(key, desired, { dryRun })),
        };
      }
      if (req.verb === 'patch') {
        const patched = applyPatch(
          current,
          req.body,
          req.bodyFormat,
        ) as KubeObject;
        desired = asObject(patched, route);
        const rvInPatch = (req.body as any)?.metadata?.resourceVersion;
        desired.metadata = {
          ...desired.metadata,
          resourceVersion: rvInPatch ?? current.metadata.resourceVersion,
        };
      } else {
        desired = asObject(req.body, route);
        checkNamespace(route, desired);
        if (desired.metadata?.name !== route.name) {
          throw errors.badRequest(
            `the name of the object (${desired.metadata?.name}) does not match the name on the URL (${route.name})`,
          );
        }
      }
      desired.metadata = {
        ...desired.metadata,
        name: route.name!,
        ...(ns ? { namespace: ns } : {}),
      };
      const warnings = unknownFieldWarnings(route, query, desired);
      const hasStatus = (route.type.subresources ?? []).includes('status');
      if (route.subresource === 'status') {
        desired = {
          ...current,
          metadata: {
            ...current.metadata,
            resourceVersion: desired.metadata.resourceVersion,
          },
          status: desired.status,
        };
      } else if (hasStatus) {
        desired = { ...desired, status: current.status };
      }
      return {
        status: 200,
        body: store.update(key, desired, { dryRun }),
        warnings,
      };
    }
    case 'delete': {
      const options = deleteOptionsOf(query, req.body);
      const result = store.delete(key, ns, route.name!, options);
      const pending = options.dryRun
        ? result.metadata.deletionTimestamp !== undefined
        : store.get(key, ns, route.name!) !== undefined;
      return { status: pending ? 202 : 200, body: result };
    }
    case 'deletecollection': {
      const options = deleteOptionsOf(query, req.body);
      const labels = labelMatcher(query.get('labelSelector') ?? undefined);
      const fields = fieldMatcher(query.get('fieldSelector') ?? undefined, key);
      const targets = store.list(key, {
        namespace: ns,
        filter: o => labels(o.metadata.labels) && fields(o),
      }).items;
      const items = targets.map(o =>
        store.delete(key, o.metadata.namespace, o.metadata.name, options),
      );
      return {
        status: 200,
        body: {
          kind: `${route.type.kind}List`,
          apiVersion: apiVersionOf(route.type),
          metadata: { resourceVersion: store.resourceVersion },
          items,
        },
      };
    }
    default:
      throw errors.methodNotAllowed(req.verb);
  }
}
