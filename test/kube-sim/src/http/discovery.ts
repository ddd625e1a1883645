import { createHash } from 'node:crypto';
import {
  apiVersionOf,
  groupVersions,
  RESOURCE_TYPES,
  ResourceType,
  verbsOf,
} from '../resources';

export const KUBERNETES_VERSION = {
  major: '1',
  minor: '32',
  gitVersion: 'v1.32.0-kube-sim',
  gitCommit: '0000000000000000000000000000000000000000',
  gitTreeState: 'clean',
  buildDate: '2026-11-30T00:00:00Z',
  goVersion: 'go1.23.4',
  compiler: 'gc',
  platform: 'linux/amd64',
};

const hash = (s: string) =>
  createHash('sha256').update(s).digest('base64').slice(0, 11);

function subresourceEntries(t: ResourceType) {
  return (t.subresources ?? []).map(sub =>
    sub === 'scale'
      ? {
          name: `${t.plural}/scale`,
          singularName: '',
          namespaced: t.namespaced,
          group: 'autoscaling',
          version: 'v1',
          kind: 'Scale',
          verbs: ['get', 'patch', 'update'],
        }
      : {
          name: `${t.plural}/status`,
          singularName: '',
          namespaced: t.namespaced,
          kind: t.kind,
          verbs: ['get', 'patch', 'update'],
        },
  );
}

function resourcesOf(group: string, version: string) {
  return RESOURCE_TYPES.filter(t => t.group === group && t.version === version);
}

export function apiResourceList(group: string, version: string) {
  const types = resourcesOf(group, version);
  if (types.length === 0) return undefined;
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: group ? `${group}/${version}` : version,
    resources: types.flatMap(t => [
      {
        name: t.plural,
        singularName: t.singular,
        namespaced: t.namespaced,
        kind: t.kind,
        verbs: verbsOf(t),
        ...(t.shortNames ? { shortNames: t.shortNames } : {}),
        ...(t.categories ? { categories: t.categories } : {}),
        storageVersionHash: hash(apiVersionOf(t) + t.kind),
      },
      ...subresourceEntries(t),
    ]),
  };
}

export function apiVersions(serverAddress: string) {
  return {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
  };
}

export function apiGroup(group: string) {
  const versions = groupVersions()
    .filter(gv => gv.group === group)
    .map(gv => ({
      groupVersion: `${gv.group}/${gv.version}`,
      version: gv.version,
    }));
  if (!group || versions.length === 0) return undefined;
  return {
    kind: 'APIGroup',
    apiVersion: 'v1',
    name: group,
    versions,
    preferredVersion: versions[0],
  };
}

export function apiGroupList() {
  const groups = [...new Set(groupVersions().map(gv => gv.group))].filter(
    Boolean,
  );
  return {
    kind: 'APIGroupList',
    apiVersion: 'v1',
    groups: groups.map(g => apiGroup(g)),
  };
}
