/** A failure the API answers with a metav1.Status, as kube-apiserver does. */
export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }

  toStatus() {
    return {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: this.message,
      reason: this.reason,
      ...(this.details ? { details: this.details } : {}),
      code: this.code,
    };
  }
}

export interface ObjectRef {
  group: string;
  kind: string;
  name?: string;
}

function statusDetails(ref: ObjectRef, extra?: Record<string, unknown>) {
  return {
    ...(ref.name !== undefined ? { name: ref.name } : {}),
    ...(ref.group ? { group: ref.group } : {}),
    kind: ref.kind,
    ...extra,
  };
}

function qualified(ref: ObjectRef) {
  return ref.group ? `${ref.kind}.${ref.group}` : ref.kind;
}

export const errors = {
  badRequest: (message: string) => new ApiError(400, 'BadRequest', message),
  unauthorized: () => new ApiError(401, 'Unauthorized', 'Unauthorized'),
  /** ref.kind is the resource ('statefulsets'); a subresource is named in the message only, as kube-apiserver does. */
  forbidden: (
    user: string,
    verb: string,
    ref: ObjectRef,
    namespace?: string,
    subresource?: string,
  ) =>
    new ApiError(
      403,
      'Forbidden',
      `${qualified(ref)}${
        ref.name ? ` "${ref.name}"` : ''
      } is forbidden: User "${user}" cannot ${verb} resource "${ref.kind}${
        subresource ? `/${subresource}` : ''
      }" in API group "${ref.group}" ${
        namespace ? `in the namespace "${namespace}"` : 'at the cluster scope'
      }`,
      statusDetails(ref),
    ),
  notFound: (ref: ObjectRef) =>
    new ApiError(
      404,
      'NotFound',
      `${qualified(ref)} "${ref.name}" not found`,
      statusDetails(ref),
    ),
  pathNotFound: (path: string) =>
    new ApiError(
      404,
      'NotFound',
      `the server could not find the requested resource (${path})`,
      {},
    ),
  methodNotAllowed: (method: string) =>
    new ApiError(
      405,
      'MethodNotAllowed',
      `the server does not allow this method on the requested resource (${method})`,
      {},
    ),
  /** A write to a resource the simulator serves only so that clients can list it: kube-apiserver's 405, saying why. */
  readOnlyResource: (verb: string, resource: string) =>
    new ApiError(
      405,
      'MethodNotAllowed',
      `the server does not allow this method on the requested resource (${verb}): kube-sim serves ${resource} read-only and always empty, for clients that list them (such as Backstage's Kubernetes tab)`,
      {},
    ),
  /** A write to a resource whose objects the simulator itself defines (its CRDs). */
  builtInResource: (verb: string, resource: string) =>
    new ApiError(
      405,
      'MethodNotAllowed',
      `the server does not allow this method on the requested resource (${verb}): kube-sim serves ${resource} read-only, as its own definitions of the custom resources it serves`,
      {},
    ),
  /** kubectl logs: the simulated kubelet starts no containers, so nothing was ever written. */
  noLogs: (namespace: string, pod: string) =>
    new ApiError(
      400,
      'BadRequest',
      `kube-sim runs no containers, so pod "${namespace}/${pod}" has no logs`,
    ),
  alreadyExists: (ref: ObjectRef) =>
    new ApiError(
      409,
      'AlreadyExists',
      `${qualified(ref)} "${ref.name}" already exists`,
      statusDetails(ref),
    ),
  conflict: (ref: ObjectRef, why: string) =>
    new ApiError(
      409,
      'Conflict',
      `Operation cannot be fulfilled on ${qualified(ref)} "${
        ref.name
      }": ${why}`,
      statusDetails(ref),
    ),
  gone: (message: string) => new ApiError(410, 'Expired', message),
  unsupportedMediaType: (contentType: string) =>
    new ApiError(
      415,
      'UnsupportedMediaType',
      `the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf, application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json (got "${contentType}")`,
    ),
  tooLarge: (limit: number) =>
    new ApiError(
      413,
      'RequestEntityTooLarge',
      `Request entity too large: limit is ${limit}`,
    ),
  invalid: (
    ref: ObjectRef,
    causes: Array<{ field: string; message: string; reason?: string }>,
  ) =>
    new ApiError(
      422,
      'Invalid',
      `${qualified(ref)} "${ref.name ?? ''}" is invalid: ${causes
        .map(c => `${c.field}: ${c.message}`)
        .join(', ')}`,
      statusDetails(ref, {
        causes: causes.map(c => ({
          reason: c.reason ?? 'FieldValueInvalid',
          message: c.message,
          field: c.field,
        })),
      }),
    ),
  tooManyRequests: (message = 'Too many requests, please try again later.') =>
    new ApiError(429, 'TooManyRequests', message, { retryAfterSeconds: 1 }),
  internal: (message: string) =>
    new ApiError(500, 'InternalError', `Internal error occurred: ${message}`),
};
