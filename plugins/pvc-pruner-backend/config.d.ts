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
    /** How clusters found by `kubernetes.clusterLocatorMethods` of `type: catalog` are read. */
    catalogClusters?: {
      /**
       * Pass a kubernetes-cluster Resource's AWS annotations (`kubernetes.io/aws-assume-role`,
       * `…/aws-external-id`, `…/aws-account-id`, `kubernetes.io/x-k8s-aws-id`) to the aws strategy,
       * as Backstage's Kubernetes backend does. Off by default: they let whoever writes the Resource
       * choose the AWS role or account the backend signs with, and the EKS cluster its token is
       * for. Set it only if every author of such Resources may use the backend's AWS credentials.
       * @default false
       */
      allowAwsAnnotations?: boolean;
    };
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
