import { InputError, isError } from '@backstage/errors';
import { ErrorRequestHandler, Request } from 'express';
import { spec } from './openapi';

/**
 * The spec validator words a failure as ajv does, e.g.
 * `request/body/pvcs/0 must NOT have additional properties`; this names the
 * field as the rest of the API does (`Invalid prune request: pvcs.0: …`), says
 * which keys are unknown, and what a pattern means.
 */

interface Schema {
  $ref?: string;
  allOf?: Schema[];
  properties?: Record<string, Schema>;
  items?: Schema;
  pattern?: string;
}

const document = spec as unknown as {
  components: {
    schemas: Record<string, Schema>;
    parameters: Record<string, { name: string }>;
  };
  paths: Record<
    string,
    Record<
      string,
      { requestBody?: { content: Record<string, { schema: Schema }> } }
    >
  >;
};

const AJV_FAILURE = /^request\/(body|query|headers)((?:\/[^ ]*)?) (.+)$/;

const WHAT = { body: 'prune request', query: 'query', headers: 'header' };

const PATTERN_MEANS = new Map([
  [
    document.components.schemas.KubernetesName.pattern,
    'must be a lowercase RFC 1123 name',
  ],
  [document.components.schemas.EventSeq.pattern, 'must be the seq of an event'],
]);

/** Header names as the spec spells them (ajv sees them lower-cased). */
const HEADER_NAMES = new Map(
  Object.values(document.components.parameters).map(p => [
    p.name.toLowerCase(),
    p.name,
  ]),
);

function resolve(schema: Schema): Schema {
  if (!schema.$ref) return schema;
  return resolve(document.components.schemas[schema.$ref.split('/').pop()!]);
}

function propertyNames(schema: Schema): string[] {
  const resolved = resolve(schema);
  return [
    ...Object.keys(resolved.properties ?? {}),
    ...(resolved.allOf ?? []).flatMap(propertyNames),
  ];
}

function schemaAt(schema: Schema, path: string[]): Schema | undefined {
  return path.reduce<Schema | undefined>((at, key) => {
    if (!at) return undefined;
    const resolved = resolve(at);
    return /^\d+$/.test(key) ? resolved.items : resolved.properties?.[key];
  }, schema);
}

function bodySchema(req: Request): Schema | undefined {
  const operation = document.paths[req.path]?.[req.method.toLowerCase()];
  return operation?.requestBody?.content['application/json']?.schema;
}

function unknownKeys(req: Request, path: string[]): string[] {
  const schema = schemaAt(bodySchema(req) ?? {}, path);
  const value = path.reduce<any>((at, key) => at?.[key], req.body);
  if (!schema || typeof value !== 'object' || value === null) return [];
  const known = propertyNames(schema);
  return Object.keys(value).filter(key => !known.includes(key));
}

function explain(req: Request, failure: string): string {
  const [, location, pointer, ajvReason] = AJV_FAILURE.exec(failure)!;
  const path = pointer.split('/').filter(Boolean);
  let reason = ajvReason;
  const required = /^must have required property '(.+)'$/.exec(ajvReason);
  const pattern = /^must match pattern "(.*)"$/.exec(ajvReason);
  if (required) {
    path.push(required[1]);
    reason = 'Required';
  } else if (ajvReason === 'must NOT have additional properties') {
    const keys = unknownKeys(req, path);
    if (keys.length)
      reason = `Unrecognized key(s) in object: ${keys
        .map(k => `'${k}'`)
        .join(', ')}`;
  } else if (pattern && PATTERN_MEANS.has(pattern[1])) {
    reason = PATTERN_MEANS.get(pattern[1])!;
  }
  const what = WHAT[location as keyof typeof WHAT];
  const field =
    location === 'headers'
      ? HEADER_NAMES.get(path[0]) ?? path[0]
      : path.join('.') || what;
  return `Invalid ${what}: ${field}: ${reason}`;
}

/** Rewords the spec validator's errors; every other error passes untouched. */
export const explainValidationErrors: ErrorRequestHandler = (
  error,
  req,
  _res,
  next,
) => {
  if (!isError(error) || error.name !== 'InputError') return next(error);
  const failures = error.message.split(/, (?=request\/)/);
  if (!failures.every(f => AJV_FAILURE.test(f))) return next(error);
  return next(
    new InputError(failures.map(failure => explain(req, failure)).join('; ')),
  );
};
