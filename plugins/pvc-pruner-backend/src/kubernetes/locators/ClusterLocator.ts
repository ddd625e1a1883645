import type { ClusterDetails } from '@backstage/plugin-kubernetes-node';

/**
 * One entry of `kubernetes.clusterLocatorMethods`: where clusters come from.
 * Upstream's locators are internal to `@backstage/plugin-kubernetes-backend`;
 * these port their behaviour one class each.
 */
export interface ClusterLocator {
  /** The locator's `type`, for messages. */
  readonly type: string;
  getClusters(): Promise<ClusterDetails[]>;
  /** What inside the locator a cluster came from, for messages: the catalog's Resource entity ref. */
  sourceOf?(cluster: ClusterDetails): string | undefined;
}
