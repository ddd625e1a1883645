import { createHash } from 'node:crypto';
import { groupVersions, RESOURCE_TYPES, ResourceType } from '../resources';
import { SNAPSHOT_SCHEMAS } from '../snapshots/schemas';

/**
 * Enough OpenAPI v3 for kubectl: it downloads the spec of a group version
 * and looks for a PATCH operation of the kind that accepts `fieldValidation`.
 * Finding one, it leaves field validation to the server instead of refusing
 * to run without `--validate=false`.
 */
function gvPath(group: string, version: string) {
  return group ? `apis/${group}/${version}` : `api/${version}`;
}

const QUERY_PARAMS = ['dryRun', 'fieldManager', 'fieldValidation', 'force'].map(
  name => ({
    name,
    in: 'query',
    schema: { type: name === 'force' ? 'boolean' : 'string' },
    uniqueItems: true,
  }),
);

function schemaName(t: ResourceType) {
  // A CRD's schema is named after its reversed group, e.g. io.k8s.storage.snapshot.v1.VolumeSnapshot.
  if (t.customResource)
    return `${t.group.split('.').reverse().join('.')}.${t.version}.${t.kind}`;
  return `io.k8s.api.${t.group ? t.group.split('.')[0] : 'core'}.${t.version}.${
    t.kind
  }`;
}

function gvDocument(group: string, version: string) {
  const types = RESOURCE_TYPES.filter(
    t => t.group === group && t.version === version,
  );
  const paths: Record<string, unknown> = {};
  const schemas: Record<string, unknown> = {};
  for (const t of types) {
    const gvk = { group: t.group, version: t.version, kind: t.kind };
    const base = `/${gvPath(group, version)}${
      t.namespaced ? '/namespaces/{namespace}' : ''
    }/${t.plural}/{name}`;
    const op = (action: string) => ({
      'x-kubernetes-action': action,
      'x-kubernetes-group-version-kind': gvk,
      operationId: `${action}${t.kind}`,
      parameters: action === 'patch' || action === 'put' ? QUERY_PARAMS : [],
      responses: {
        '200': {
          content: {
            'application/json': {
              schema: { $ref: `#/components/schemas/${schemaName(t)}` },
            },
          },
        },
      },
    });
    paths[base] =
      t.listOnly || t.readOnly
        ? { get: op('get') }
        : {
            get: op('get'),
            put: op('put'),
            patch: op('patch'),
            delete: op('delete'),
          };
    schemas[schemaName(t)] = t.customResource
      ? {
          ...SNAPSHOT_SCHEMAS[t.kind],
          'x-kubernetes-group-version-kind': [gvk],
        }
      : {
          type: 'object',
          description: `${t.kind} (served by kube-sim)`,
          'x-kubernetes-group-version-kind': [gvk],
          properties: {
            apiVersion: { type: 'string' },
            kind: { type: 'string' },
            metadata: { type: 'object' },
            spec: { type: 'object' },
            status: { type: 'object' },
          },
        };
  }
  return {
    openapi: '3.0.0',
    info: { title: 'Kubernetes', version: 'v1.32.0' },
    paths,
    components: { schemas },
  };
}

const documents = new Map(
  groupVersions().map(({ group, version }) => {
    const body = JSON.stringify(gvDocument(group, version));
    return [
      gvPath(group, version),
      {
        body,
        hash: createHash('sha512')
          .update(body)
          .digest('hex')
          .toUpperCase()
          .slice(0, 128),
      },
    ];
  }),
);

export function openApiV3Index() {
  return {
    paths: Object.fromEntries(
      [...documents.entries()].map(([path, doc]) => [
        path,
        { serverRelativeURL: `/openapi/v3/${path}?hash=${doc.hash}` },
      ]),
    ),
  };
}

/** The serialized document for 'api/v1' or 'apis/apps/v1'. */
export function openApiV3Document(path: string): string | undefined {
  return documents.get(path)?.body;
}
