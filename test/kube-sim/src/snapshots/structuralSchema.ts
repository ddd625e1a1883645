/**
 * The part of apiextensions-apiserver that a CRD's structural schema drives:
 * unknown fields (pruned, warned about, or refused with fieldValidation=Strict)
 * and the OpenAPI checks (type, required, enum, minimum), with the messages
 * kube-apiserver gives. metadata is left to admission, as for built-in kinds.
 */
export interface StructuralSchema {
  type?: 'object' | 'string' | 'boolean' | 'integer' | 'array';
  description?: string;
  format?: string;
  properties?: Record<string, StructuralSchema>;
  required?: string[];
  enum?: string[];
  minimum?: number;
  items?: StructuralSchema;
  additionalProperties?: StructuralSchema;
  'x-kubernetes-int-or-string'?: boolean;
  pattern?: string;
}

export type Cause = { field: string; message: string; reason?: string };

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number')
    return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

const TOP_LEVEL = new Set(['apiVersion', 'kind', 'metadata']);

/** Paths (`spec.foo`) of fields the schema does not know, in document order. */
export function unknownFields(
  schema: StructuralSchema,
  obj: Record<string, unknown>,
): string[] {
  const found: string[] = [];
  const walk = (s: StructuralSchema, value: unknown, path: string) => {
    if (Array.isArray(value) && s.items) {
      value.forEach((v, i) => walk(s.items!, v, `${path}[${i}]`));
      return;
    }
    if (!isPlainObject(value)) return;
    for (const [key, child] of Object.entries(value)) {
      const at = path ? `${path}.${key}` : key;
      const known = s.properties?.[key] ?? s.additionalProperties;
      if (!path && TOP_LEVEL.has(key)) continue;
      if (!known) found.push(at);
      else walk(known, child, at);
    }
  };
  walk(schema, obj, '');
  return found;
}

/** Removes the fields unknownFields names (a copy is not made: pass one). */
export function prune(schema: StructuralSchema, obj: Record<string, unknown>) {
  const walk = (s: StructuralSchema, value: unknown, top: boolean) => {
    if (Array.isArray(value) && s.items) {
      value.forEach(v => walk(s.items!, v, false));
      return;
    }
    if (!isPlainObject(value)) return;
    for (const key of Object.keys(value)) {
      if (top && TOP_LEVEL.has(key)) continue;
      const known = s.properties?.[key] ?? s.additionalProperties;
      // A null of a field that is not nullable is dropped, as apiextensions-apiserver does.
      if (!known || value[key] === null) delete value[key];
      else walk(known, value[key], false);
    }
  };
  walk(schema, obj, true);
}

function typeMatches(s: StructuralSchema, value: unknown): boolean {
  if (s['x-kubernetes-int-or-string'])
    return typeof value === 'string' || Number.isInteger(value);
  const actual = jsonType(value);
  switch (s.type) {
    case undefined:
      return true;
    case 'integer':
      return actual === 'integer';
    default:
      return actual === s.type;
  }
}

/** The schema checks of one object; metadata is not looked at. */
export function validateAgainstSchema(
  schema: StructuralSchema,
  obj: Record<string, unknown>,
): Cause[] {
  const causes: Cause[] = [];
  const walk = (s: StructuralSchema, value: unknown, path: string) => {
    if (path && !typeMatches(s, value)) {
      const actual = jsonType(value);
      causes.push({
        field: path,
        message: `Invalid value: "${actual}": ${path} in body must be of type ${
          s['x-kubernetes-int-or-string'] ? 'integer,string' : s.type
        }: "${actual}"`,
        reason: 'FieldValueTypeInvalid',
      });
      return;
    }
    if (s.enum && typeof value === 'string' && !s.enum.includes(value)) {
      causes.push({
        field: path,
        message: `Unsupported value: "${value}": supported values: ${s.enum
          .map(e => `"${e}"`)
          .join(', ')}`,
        reason: 'FieldValueNotSupported',
      });
    }
    if (
      s.minimum !== undefined &&
      typeof value === 'number' &&
      value < s.minimum
    ) {
      causes.push({
        field: path,
        message: `Invalid value: ${value}: ${path} in body should be greater than or equal to ${s.minimum}`,
      });
    }
    if (
      s.pattern &&
      typeof value === 'string' &&
      !new RegExp(s.pattern).test(value)
    ) {
      causes.push({
        field: path,
        message: `Invalid value: "${value}": ${path} in body should match '${s.pattern}'`,
      });
    }
    if (Array.isArray(value) && s.items) {
      value.forEach((v, i) => walk(s.items!, v, `${path}[${i}]`));
      return;
    }
    if (!isPlainObject(value)) return;
    for (const name of s.required ?? []) {
      if (value[name] === undefined || value[name] === null)
        causes.push({
          field: path ? `${path}.${name}` : name,
          message: 'Required value',
          reason: 'FieldValueRequired',
        });
    }
    for (const [key, child] of Object.entries(value)) {
      if (!path && TOP_LEVEL.has(key)) continue;
      const known = s.properties?.[key] ?? s.additionalProperties;
      if (known && child !== undefined && child !== null)
        walk(known, child, path ? `${path}.${key}` : key);
    }
  };
  walk(schema, obj, '');
  return causes;
}
