import { errors } from './errors';

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** RFC 7386 JSON merge patch. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch;
  const result: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key], value);
  }
  return result;
}

/**
 * Strategic merge patch, simplified: a merge patch in which `$patch`/`$retainKeys`
 * directives are dropped. Lists are replaced, as for a merge patch; real servers
 * merge some lists by key, which no client we test against relies on.
 */
export function strategicMergePatch(target: unknown, patch: unknown): unknown {
  return mergePatch(target, stripDirectives(patch));
}

function stripDirectives(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(stripDirectives);
  if (!isObject(v)) return v;
  return Object.fromEntries(
    Object.entries(v)
      .filter(([k]) => !k.startsWith('$') && !k.startsWith('$setElementOrder'))
      .map(([k, val]) => [k, stripDirectives(val)]),
  );
}

function unescape(token: string) {
  return token.replace(/~1/g, '/').replace(/~0/g, '~');
}

function parsePointer(path: string): string[] {
  if (path === '') return [];
  if (!path.startsWith('/'))
    throw errors.badRequest(`invalid JSON pointer "${path}"`);
  return path.slice(1).split('/').map(unescape);
}

function resolveParent(doc: any, tokens: string[], path: string) {
  let node = doc;
  for (const token of tokens.slice(0, -1)) {
    if (node === null || typeof node !== 'object' || !(token in node)) {
      throw errors.invalid({ group: '', kind: 'Patch' }, [
        { field: path, message: 'path does not exist' },
      ]);
    }
    node = node[token];
  }
  return node;
}

function getAt(doc: any, path: string) {
  const tokens = parsePointer(path);
  let node = doc;
  for (const token of tokens) {
    if (node === null || typeof node !== 'object' || !(token in node)) {
      throw errors.invalid({ group: '', kind: 'Patch' }, [
        { field: path, message: 'path does not exist' },
      ]);
    }
    node = node[token];
  }
  return node;
}

function arrayIndex(
  arr: unknown[],
  token: string,
  forInsert: boolean,
  path: string,
) {
  if (token === '-' && forInsert) return arr.length;
  if (!/^(0|[1-9]\d*)$/.test(token))
    throw errors.badRequest(`invalid array index "${token}" in "${path}"`);
  const index = Number(token);
  if (index > arr.length || (!forInsert && index === arr.length)) {
    throw errors.invalid({ group: '', kind: 'Patch' }, [
      { field: path, message: 'array index out of bounds' },
    ]);
  }
  return index;
}

function add(doc: any, path: string, value: unknown): any {
  const tokens = parsePointer(path);
  if (tokens.length === 0) return value;
  const parent = resolveParent(doc, tokens, path);
  const last = tokens[tokens.length - 1];
  if (Array.isArray(parent))
    parent.splice(arrayIndex(parent, last, true, path), 0, value);
  else if (parent !== null && typeof parent === 'object') parent[last] = value;
  else throw errors.badRequest(`cannot add at "${path}"`);
  return doc;
}

function remove(doc: any, path: string): any {
  const tokens = parsePointer(path);
  const parent = resolveParent(doc, tokens, path);
  const last = tokens[tokens.length - 1];
  if (Array.isArray(parent))
    parent.splice(arrayIndex(parent, last, false, path), 1);
  else if (parent && typeof parent === 'object' && last in parent)
    delete parent[last];
  else
    throw errors.invalid({ group: '', kind: 'Patch' }, [
      { field: path, message: 'path does not exist' },
    ]);
  return doc;
}

/** RFC 6902 JSON patch. Works on a deep copy; throws without touching the input. */
export function jsonPatch(target: unknown, operations: unknown): unknown {
  if (!Array.isArray(operations))
    throw errors.badRequest('a JSON patch must be an array of operations');
  let doc = structuredClone(target);
  for (const op of operations) {
    if (
      !isObject(op) ||
      typeof op.op !== 'string' ||
      typeof op.path !== 'string'
    ) {
      throw errors.badRequest(
        'each JSON patch operation needs "op" and "path"',
      );
    }
    const path = op.path;
    switch (op.op) {
      case 'add':
        doc = add(doc, path, structuredClone(op.value));
        break;
      case 'remove':
        doc = remove(doc, path);
        break;
      case 'replace':
        doc = add(remove(doc, path), path, structuredClone(op.value));
        break;
      case 'move': {
        const value = getAt(doc, String(op.from));
        doc = add(remove(doc, String(op.from)), path, value);
        break;
      }
      case 'copy':
        doc = add(doc, path, structuredClone(getAt(doc, String(op.from))));
        break;
      case 'test':
        if (JSON.stringify(getAt(doc, path)) !== JSON.stringify(op.value)) {
          throw errors.invalid({ group: '', kind: 'Patch' }, [
            { field: path, message: 'test operation failed' },
          ]);
        }
        break;
      default:
        throw errors.badRequest(`unknown JSON patch operation "${op.op}"`);
    }
  }
  return doc;
}
