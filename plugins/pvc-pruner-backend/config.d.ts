/*
 * The clusters come from `kubernetes.*` (clusterLocatorMethods,
 * clusterLocatorContinueOnError, googleServiceAccountCredentials), whose
 * schema @backstage/plugin-kubernetes-backend, a dependency, declares: they
 * are read as it reads them and not declared again here.
 */
export interface Config {
  /** Settings of the pvc-pruner backend plugin. */
  pvcPruner?: {
    /**
     * Seconds to wait for each Kubernetes API request before reporting the cluster as unavailable.
     * @default 10
     */
    clusterRequestTimeoutSeconds?: number;
    /**
     * Seconds a prune follows each deleted claim until it is gone and its volume is deleted or Released.
     * @default 120
     */
    volumeWaitTimeoutSeconds?: number;
    /**
     * Duration of the Kubernetes Lease that stops two prunes of one StatefulSet running at once.
     * It is renewed every third of this while a job runs, and a job deletes nothing unless its
     * last renewal is younger than two thirds of it. A job whose Backstage instance stops is
     * marked interrupted once this has passed without a heartbeat (by the database's clock).
     * @default 30
     */
    leaseDurationSeconds?: number;
    /**
     * Refuse to prune when the permission framework is off (`permission.enabled: false`),
     * instead of letting every signed-in user prune.
     * @default false
     */
    requirePermissionFramework?: boolean;
    /**
     * The claims of a StatefulSet scaled to 0 replicas: `keep` them (teams scale to 0 to pause a
     * database, and scaling up again reattaches every claim with its data), or `offer` them as
     * orphans, like the claims of any ordinal a StatefulSet does not run.
     * @default keep
     * @visibility backend
     */
    pausedStatefulSets?: 'keep' | 'offer';
    /**
     * What storage costs, so the card and the fleet view show orphans in money as well as GiB.
     * Without it they show GiB only. Costs are computed by the backend and sent with its answers.
     */
    pricing?: {
      /** ISO 4217 code of the prices, e.g. `USD` or `EUR`. */
      currency: string;
      /**
       * Price of one GiB (2^30 bytes) per month for a StorageClass not listed in `storageClasses`.
       * Without it, claims of unlisted StorageClasses have no cost, and answers name those classes.
       */
      defaultPricePerGiBMonth?: number;
      /** Price of one GiB per month, by StorageClass name, e.g. `{ gp3: 0.08, io2: 0.125 }`. */
      storageClasses?: { [storageClass: string]: number };
    };
  };
}
