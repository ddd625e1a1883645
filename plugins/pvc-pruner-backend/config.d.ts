import type { SchedulerServiceTaskScheduleDefinitionConfig } from '@backstage/backend-plugin-api';

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
     * Days after which finished prune jobs (with their events) and the sightings of claims no
     * scan has seen as orphans are deleted, by a daily task on one replica. Jobs still queued or
     * running are never deleted. At least 1.
     * @default 90
     */
    retentionDays?: number;
    /** How much one user may run at once. Each StatefulSet also runs at most 3 jobs at once. */
    limits?: {
      /**
       * Queued or running prune jobs, dry runs included, one user may have across every replica.
       * One more is refused with 429 until one finishes.
       * @default 10
       */
      runningJobsPerUser?: number;
      /**
       * Open event streams of prune jobs (the card follows each job with one) one user may have
       * on one Backstage instance. One more is refused with 429 until one ends.
       * @default 20
       */
      eventStreamsPerUser?: number;
    };
    /**
     * Let every signed-in user prune (and dry-run) every claim while the permission framework is
     * off (`permission.enabled` is not true). Without it, pruning is refused until the framework
     * is on with a policy. It has no effect while the framework is on.
     * @default false
     */
    allowPruneWithoutPermissionFramework?: boolean;
    /**
     * Removed: pruning is now refused while the permission framework is off, unless
     * `allowPruneWithoutPermissionFramework` is true. `false` with the framework off fails the
     * start (it used to let everyone prune); any other value is ignored with a warning.
     * @deprecated Replaced by allowPruneWithoutPermissionFramework; remove it.
     */
    requirePermissionFramework?: boolean;
    /** How a StatefulSet's ownership is checked beyond the catalog. */
    ownership?: {
      /**
       * An annotation on Namespace objects, such as `backstage.io/owner`, naming (comma-separated
       * entity refs; kind group and namespace default unless given) who may prune in that namespace.
       * When set, a prune also needs the StatefulSet's namespace to name the owner of every entity
       * that claims the StatefulSet (or that entity itself). Namespaces are written under the
       * platform's RBAC, not by whoever writes catalog YAML. Needs `get` on namespaces.
       */
      namespaceOwnerAnnotation?: string;
    };
    /**
     * The claims of a StatefulSet scaled to 0 replicas: `keep` them (teams scale to 0 to pause a
     * database, and scaling up again reattaches every claim with its data), or `offer` them as
     * orphans, like the claims of any ordinal a StatefulSet does not run.
     * @default keep
     * @visibility backend
     */
    pausedStatefulSets?: 'keep' | 'offer';
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
     * A CSI VolumeSnapshot (`snapshot.storage.k8s.io/v1`) of each claim before a prune deletes it,
     * in the claim's namespace: an undo window. A prune asks for it per job (`snapshot: true`).
     * Needs the external-snapshotter CRDs and controller, and a CSI driver that takes snapshots.
     */
    /**
     * Automatic pruning of the orphans of entities that opt in with the annotation
     * `pvc-pruner.backstage.io/auto-prune: "<grace>"` (e.g. `"7d"`): a claim seen orphaned for
     * longer than its entity's grace is pruned by a scheduled task, through the same job as a
     * person's prune, with a snapshot first when snapshots are enabled. A StatefulSet is
     * automated only when every entity that claims it has opted in.
     */
    autoPrune?: {
      /** @default false */
      enabled?: boolean;
      /**
       * When the task runs, as catalog providers' schedules are written, e.g.
       * `{ frequency: { hours: 1 }, timeout: { minutes: 30 } }` or a cron expression.
       * One replica runs it per schedule.
       */
      schedule?: SchedulerServiceTaskScheduleDefinitionConfig;
      /**
       * The shortest grace an annotation may set (seconds `s`, minutes `m`, hours `h`, days `d`, weeks `w`:
       * `"1d"`, `"36h"`). An entity whose annotation is shorter is not automated, and its card says why.
       * @default 1d
       */
      minimumGrace?: string;
      /** Only these clusters (by name) are automated; all when left out. */
      clusters?: string[];
      /** Only these namespaces are automated; all when left out. */
      namespaces?: string[];
      /** A run stops after deleting this many claims, and says so. @default 50 */
      maxClaimsPerRun?: number;
      /** A run stops after deleting this many bytes of claims, and says so. @default 10 TiB */
      maxBytesPerRun?: number;
      /** Owners are notified this long before a claim becomes eligible. @default 2d */
      notifyBefore?: string;
      /**
       * When true, no run happens unless the notifications backend is installed, so owners are
       * always told. When false, runs go on without it and the backend logs once that owners
       * cannot be told. Installed means a plugin with the id `notifications` in this backend or
       * in `discovery.endpoints`.
       * @default false
       */
      requireNotifications?: boolean;
    };
    /** Reclaiming Released volumes (setting their reclaim policy to Delete). */
    reclaim?: {
      /**
       * The namespace where reclaim Leases are kept, one per claim namespace
       * (`pvc-pruner--reclaim-<namespace>`). Not the claims' own namespace: a Released volume
       * usually comes from a deleted namespace, where nothing can be created. It must exist and
       * never be deleted while the plugin runs; the plugin's service account needs get, create,
       * update and delete on leases there.
       * @default default
       */
      leaseNamespace?: string;
    };
    snapshots?: {
      /**
       * Whether prunes may keep snapshots. Off, a prune that asks for one is refused (400).
       * @default false
       */
      enabled?: boolean;
      /**
       * Days a snapshot is kept after the job that took it (its expiry, in its annotations).
       * An hourly task on one replica then deletes it (uid precondition, audited), unless its
       * `pvc-pruner.backstage.io/keep-until` annotation is later or unreadable, or a claim is being
       * restored from it. Clusters whose auth provider needs a user's token (google, oidc, aks) are
       * not expired by the task. At most 3650.
       * @default 7
       */
      retentionDays?: number;
      /**
       * Seconds a job waits for each snapshot to be `readyToUse`. A snapshot not ready by then
       * keeps its claim from being deleted, and the job ends `incomplete`, naming it. At most 3600.
       * @default 300
       */
      timeoutSeconds?: number;
      /**
       * In a job that asks for snapshots: when true, a claim whose volume has no VolumeSnapshotClass
       * is not deleted; when false, it is deleted without a snapshot, and its outcome says so. A
       * snapshot that fails or times out always keeps its claim. It does not make every prune take
       * snapshots: a user may still ask for none for a job (`snapshot: false`, a choice the card's
       * dialog offers), and that job deletes its claims without them.
       * @default true
       */
      required?: boolean;
      /**
       * The VolumeSnapshotClass by StorageClass name, e.g. `{ gp3: ebs-snapshots }`. A StorageClass
       * not listed uses the class annotated `snapshot.storage.kubernetes.io/is-default-class: "true"`
       * for its volume's CSI driver.
       */
      storageClasses?: { [storageClass: string]: string };
      /**
       * The furthest ahead, in days from now, that a user may keep a snapshot with
       * `POST /v1/snapshots/keep` (its `pvc-pruner.backstage.io/keep-until` annotation). A positive
       * whole number, at most 3650.
       * @default 90
       */
      maxKeepDays?: number;
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
      /**
       * Price of one GiB of kept VolumeSnapshots per month (by their restore size), e.g. `0.05`.
       * Without it, the card and the fleet view show kept snapshots in GiB only.
       */
      snapshotPricePerGiBMonth?: number;
    };
  };
}
