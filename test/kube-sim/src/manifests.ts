import { KubeObject } from './types';

/** A manifest as a client would send it (the store fills in uid, resourceVersion…). */
export const manifest = (fields: Record<string, unknown>) =>
  fields as unknown as KubeObject;

/**
 * A StatefulSet with one 1Gi `data` volumeClaimTemplate; `spec` overrides
 * fields of its spec. Its selector is `labels` (default `app: <name>`), which
 * are also set on the StatefulSet itself when given.
 */
export function statefulSet(
  name: string,
  spec: Record<string, unknown> = {},
  namespace = 'default',
  labels?: Record<string, string>,
): KubeObject {
  const selected = labels ?? { app: name };
  return manifest({
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name, namespace, ...(labels ? { labels } : {}) },
    spec: {
      replicas: 3,
      serviceName: name,
      selector: { matchLabels: selected },
      template: {
        metadata: { labels: { ...selected, tier: 'db' } },
        spec: { containers: [{ name: 'main', image: 'nginx:1.27' }] },
      },
      volumeClaimTemplates: [
        {
          metadata: { name: 'data' },
          spec: {
            accessModes: ['ReadWriteOnce'],
            resources: { requests: { storage: '1Gi' } },
          },
        },
      ],
      ...spec,
    },
  });
}

/** A 1Gi ReadWriteOnce claim; `spec` overrides fields of its spec. */
export function pvc(
  name: string,
  spec: Record<string, unknown> = {},
  namespace = 'default',
  labels?: Record<string, string>,
): KubeObject {
  return manifest({
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, namespace, ...(labels ? { labels } : {}) },
    spec: {
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: '1Gi' } },
      ...spec,
    },
  });
}

/**
 * An autoscaling/v2 HorizontalPodAutoscaler of the StatefulSet `target`
 * (apps/v1), from `minReplicas` to `maxReplicas` on CPU; `spec` overrides
 * fields of its spec.
 */
export function horizontalPodAutoscaler(
  name: string,
  target: string,
  replicas: { minReplicas?: number; maxReplicas: number },
  namespace = 'default',
  spec: Record<string, unknown> = {},
): KubeObject {
  return manifest({
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata: { name, namespace },
    spec: {
      scaleTargetRef: {
        apiVersion: 'apps/v1',
        kind: 'StatefulSet',
        name: target,
      },
      ...replicas,
      metrics: [
        {
          type: 'Resource',
          resource: {
            name: 'cpu',
            target: { type: 'Utilization', averageUtilization: 70 },
          },
        },
      ],
      ...spec,
    },
  });
}

/** A pod mounting the claims, each as a volume of its name. */
export function pod(
  name: string,
  claims: string[] = [],
  spec: Record<string, unknown> = {},
  namespace = 'default',
): KubeObject {
  return manifest({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace },
    spec: {
      containers: [{ name: 'main', image: 'busybox' }],
      volumes: claims.map(claimName => ({
        name: claimName,
        persistentVolumeClaim: { claimName },
      })),
      ...spec,
    },
  });
}
