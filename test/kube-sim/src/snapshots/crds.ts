import { RESOURCE_TYPES } from '../resources';
import { KubeObject } from '../types';
import { PRINTER_COLUMNS, SNAPSHOT_SCHEMAS } from './schemas';

export const CRDS = 'apiextensions.k8s.io/customresourcedefinitions';

/**
 * The CustomResourceDefinitions of the custom resources the simulator
 * serves, as `kubectl get crd` shows them on a cluster with the CSI
 * snapshotter installed, made from the schemas the server validates with.
 */
export function customResourceDefinitions(): KubeObject[] {
  return RESOURCE_TYPES.filter(t => t.customResource).map(t => {
    const names = {
      kind: t.kind,
      listKind: `${t.kind}List`,
      plural: t.plural,
      singular: t.singular,
      ...(t.shortNames ? { shortNames: [...t.shortNames] } : {}),
    };
    return {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: {
        name: `${t.plural}.${t.group}`,
      } as KubeObject['metadata'],
      spec: {
        group: t.group,
        names,
        scope: t.namespaced ? 'Namespaced' : 'Cluster',
        versions: [
          {
            name: t.version,
            served: true,
            storage: true,
            ...(t.subresources?.includes('status')
              ? { subresources: { status: {} } }
              : {}),
            schema: { openAPIV3Schema: SNAPSHOT_SCHEMAS[t.kind] },
            additionalPrinterColumns: PRINTER_COLUMNS[t.kind],
          },
        ],
      },
      status: {
        acceptedNames: names,
        conditions: ['NamesAccepted', 'Established'].map(type => ({
          type,
          status: 'True',
          reason:
            type === 'Established' ? 'InitialNamesAccepted' : 'NoConflicts',
          message:
            type === 'Established'
              ? 'the initial names have been accepted'
              : 'no conflicts found',
        })),
        storedVersions: [t.version],
      },
    };
  });
}
