import { createHash } from 'node:crypto';
import type { ClusterDetails } from '@backstage/plugin-kubernetes-node';

/**
 * A cluster as the registry located it: its details, where they came from,
 * and what makes it the same cluster as another. Gateways, watch caches and
 * shared scans are keyed by {@link LocatedCluster.identity}, never by the
 * name alone: two clusters of one name are never taken for each other, and a
 * catalog Resource whose URL changes is a new cluster, so nothing built for
 * the old URL serves the new one.
 */
export interface LocatedCluster extends ClusterDetails {
  /**
   * Where it was found, for messages: `kubernetes.clusterLocatorMethods[0]
   * (config)`, or for the catalog `kubernetes.clusterLocatorMethods[1]
   * (catalog) Resource resource:default/warehouse`.
   */
  readonly origin: string;
  /** The `type` of the locator that found it: config, catalog, gke, localKubectlProxy. */
  readonly locatorType: string;
  /** Its origin and name: a new identity in the same place replaces the cluster that was there. */
  readonly place: string;
  /**
   * A digest of where it was found and of everything that decides where its
   * requests go and with what: name, URL, CA (data or file), TLS
   * verification and auth metadata (the provider, a token, a role to
   * assume). Titles and dashboards are not part of it.
   */
  readonly identity: string;
}

/** `value` with its object keys sorted at every level, so equal details always digest alike. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === 'object')
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map(key => [key, canonical((value as Record<string, unknown>)[key])]),
    );
  return value;
}

/** The details with where they came from and their identity. */
export function locatedCluster(
  details: ClusterDetails,
  from: { origin: string; locatorType: string },
): LocatedCluster {
  const identity = createHash('sha256')
    .update(
      JSON.stringify(
        canonical([
          from.origin,
          details.name,
          details.url,
          details.caData ?? null,
          details.caFile ?? null,
          details.skipTLSVerify ?? false,
          details.authMetadata,
        ]),
      ),
    )
    .digest('base64url');
  return {
    ...details,
    origin: from.origin,
    locatorType: from.locatorType,
    place: `${from.origin}\n${details.name}`,
    identity,
  };
}
