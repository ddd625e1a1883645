import type { SimReady } from './simProcess';

/**
 * What a benchmark's backend process runs with: its clusters, its catalog
 * and extra `pvcPruner` settings. Built by the parent, passed to
 * backendProcess.ts as JSON (BENCH_BACKEND).
 */
export interface BackendSetup {
  clusters: BenchCluster[];
  entities: BenchEntity[];
  pvcPruner?: Record<string, unknown>;
}

/** A `kubernetes.clusterLocatorMethods[].clusters[]` entry, as a platform team writes it. */
export type BenchCluster = Record<string, string>;

/** A catalog Component with these Kubernetes annotations. */
export interface BenchEntity {
  name: string;
  owner: string;
  annotations: Record<string, string>;
}

/** The setup's entity as the catalog holds it: a production service Component in namespace default. */
export const componentOf = (e: BenchEntity) => ({
  apiVersion: 'backstage.io/v1alpha1',
  kind: 'Component',
  metadata: { name: e.name, namespace: 'default', annotations: e.annotations },
  spec: { type: 'service', owner: e.owner, lifecycle: 'production' },
});

/** The OIDC provider of a client-side cluster: the card sends the user's ID token in this header. */
export const OIDC_TOKEN_PROVIDER = 'okta';
export const OIDC_TOKEN_HEADER = `Backstage-Kubernetes-Authorization-oidc-${OIDC_TOKEN_PROVIDER}`;

/**
 * The simulator as a cluster of a server-side provider (the plugin's own
 * service account token): its reads may come from the watch cache.
 */
export const serviceAccountCluster = (
  name: string,
  sim: SimReady,
): BenchCluster => ({
  name,
  url: sim.url,
  authProvider: 'serviceAccount',
  serviceAccountToken: sim.token,
  caData: Buffer.from(sim.caCert).toString('base64'),
});

/**
 * The simulator as a cluster of a client-side provider (OIDC): every read
 * carries the user's own token, so none is ever answered from a cache.
 */
export const oidcCluster = (name: string, sim: SimReady): BenchCluster => ({
  name,
  url: sim.url,
  authProvider: 'oidc',
  oidcTokenProvider: OIDC_TOKEN_PROVIDER,
  caData: Buffer.from(sim.caCert).toString('base64'),
});

/** An entity whose workloads carry `backstage.io/kubernetes-id: <id>`, in `cluster` only when given. */
export function kubernetesIdEntity(
  name: string,
  id: string,
  options: { owner?: string; cluster?: string } = {},
): BenchEntity {
  return {
    name,
    owner: options.owner ?? 'group:default/bench',
    annotations: {
      'backstage.io/kubernetes-id': id,
      ...(options.cluster
        ? { 'backstage.io/kubernetes-cluster': options.cluster }
        : {}),
    },
  };
}

/** An entity whose workloads are those `selector` matches (in `namespace`, when given). */
export function selectorEntity(
  name: string,
  selector: string,
  options: { owner: string; namespace?: string },
): BenchEntity {
  return {
    name,
    owner: options.owner,
    annotations: {
      'backstage.io/kubernetes-label-selector': selector,
      ...(options.namespace
        ? { 'backstage.io/kubernetes-namespace': options.namespace }
        : {}),
    },
  };
}
