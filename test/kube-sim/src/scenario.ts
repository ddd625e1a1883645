import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { findTypeByKind, resourceKey } from './resources';
import { ObjectStore } from './store';
import { KubeObject } from './types';

const SCENARIOS = join(
  dirname(require.resolve('kube-sim/package.json')),
  'scenarios',
);
const BUILT_IN: Record<string, string> = {
  demo: join(SCENARIOS, 'demo.yaml'),
  empty: join(SCENARIOS, 'empty.yaml'),
};

/** Parses a multi-document YAML scenario; throws naming the document that is wrong. */
export function parseScenario(text: string, source = 'scenario'): KubeObject[] {
  return parseAllDocuments(text).flatMap((doc, i) => {
    if (doc.errors.length > 0)
      throw new Error(`${source}: document ${i + 1}: ${doc.errors[0].message}`);
    const obj = doc.toJS() as KubeObject | null;
    if (obj === null) return [];
    if (!findTypeByKind(obj.apiVersion, obj.kind)) {
      throw new Error(
        `${source}: document ${i + 1}: kube-sim does not serve ${
          obj.apiVersion
        } ${obj.kind}`,
      );
    }
    return [obj];
  });
}

/** 'demo', 'empty' or a path to a YAML file. */
export function loadScenario(nameOrPath: string): KubeObject[] {
  const path = BUILT_IN[nameOrPath] ?? nameOrPath;
  return parseScenario(readFileSync(path, 'utf8'), path);
}

/** Applies objects in dependency order: namespaces and classes before what lives in them. */
export function applyScenario(store: ObjectStore, objects: KubeObject[]) {
  const rank = (o: KubeObject) =>
    [
      'Namespace',
      'StorageClass',
      'PersistentVolume',
      'PersistentVolumeClaim',
    ].indexOf(o.kind) >>> 0;
  for (const obj of [...objects].sort((a, b) => rank(a) - rank(b))) {
    const type = findTypeByKind(obj.apiVersion, obj.kind)!;
    const withNamespace = type.namespaced
      ? { ...obj, metadata: { namespace: 'default', ...obj.metadata } }
      : obj;
    store.apply(resourceKey(type), withNamespace);
  }
}
