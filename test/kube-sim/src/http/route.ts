import { errors } from '../errors';
import { findType, ResourceType } from '../resources';

export interface ResourceRoute {
  type: ResourceType;
  namespace?: string;
  name?: string;
  /** 'log' only for a pod: there are no logs to read (see handleResource). */
  subresource?: 'status' | 'scale' | 'log';
}

const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

/**
 * Parses /api/v1/... and /apis/<group>/<version>/... paths; returns undefined
 * for paths that are not resource paths (discovery and the rest).
 */
export function parseResourcePath(path: string): ResourceRoute | undefined {
  const segments = path.split('/').filter(Boolean).map(decodeURIComponent);
  let group: string;
  let version: string;
  let rest: string[];
  if (segments[0] === 'api' && segments.length >= 3) {
    [group, version, rest] = ['', segments[1], segments.slice(2)];
  } else if (segments[0] === 'apis' && segments.length >= 4) {
    [group, version, rest] = [segments[1], segments[2], segments.slice(3)];
  } else {
    return undefined;
  }
  let namespace: string | undefined;
  if (
    rest[0] === 'namespaces' &&
    rest.length >= 3 &&
    !NAMESPACE_SUBRESOURCES.has(rest[2])
  ) {
    namespace = rest[1];
    rest = rest.slice(2);
  }
  const [plural, name, subresource, ...extra] = rest;
  const type = findType(group, version, plural);
  if (!type || extra.length > 0) throw errors.pathNotFound(path);
  if (namespace !== undefined && !type.namespaced)
    throw errors.pathNotFound(path);
  const podLog = subresource === 'log' && type.kind === 'Pod' && !!name;
  if (
    subresource !== undefined &&
    !podLog &&
    !(type.subresources ?? []).includes(subresource as 'status')
  ) {
    throw errors.pathNotFound(path);
  }
  return {
    type,
    namespace,
    name,
    subresource: subresource as ResourceRoute['subresource'],
  };
}
