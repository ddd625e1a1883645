/*
 * The demo's two Kubernetes API simulators (test/kube-sim), over https, in
 * the start script's process: "demo" (the demo scenario, a service-account
 * token in app-config.yaml) and "warehouse" (scenarios/warehouse.yaml, found
 * through the catalog locator, reached with an x509 client certificate);
 * the state folder's kubeconfig has a context for each.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadScenario, PolicyRule, startKubeSim } from 'kube-sim';
import {
  parse as parseYaml,
  parseAllDocuments,
  stringify as stringifyYaml,
} from 'yaml';
import { base64, DemoRun, ROOT } from './demoRun';

/**
 * The rules of a ClusterRole the plugin ships (plugins/pvc-pruner-backend/rbac/),
 * read from the manifest so the demo grants what a platform team would apply,
 * and a rule added there reaches the demo.
 */
function shippedRules(manifest: string): PolicyRule[] {
  const file = join(ROOT, 'plugins/pvc-pruner-backend/rbac', manifest);
  const role = parseAllDocuments(readFileSync(file, 'utf8'))
    .map(d => d.toJS())
    .find(d => d?.kind === 'ClusterRole');
  if (!role?.rules) throw new Error(`no ClusterRole with rules in ${file}`);
  return role.rules;
}

/**
 * What Backstage's service account may do in the demo cluster: read what the
 * Kubernetes tab shows, and what pvc-pruner's ClusterRoles grant: read what it
 * inspects, delete claims, reclaim Released volumes, hold its Leases, and take
 * the snapshots a prune keeps (`pvcPruner.snapshots` is on in app-config.yaml).
 */
export const BACKSTAGE_RULES: PolicyRule[] = [
  // Backstage's Kubernetes tab.
  {
    apiGroups: [''],
    resources: [
      'pods',
      'services',
      'configmaps',
      'limitranges',
      'resourcequotas',
    ],
    verbs: ['get', 'list', 'watch'],
  },
  {
    apiGroups: ['apps'],
    resources: ['deployments', 'replicasets', 'statefulsets', 'daemonsets'],
    verbs: ['get', 'list', 'watch'],
  },
  {
    apiGroups: ['autoscaling'],
    resources: ['horizontalpodautoscalers'],
    verbs: ['get', 'list', 'watch'],
  },
  {
    apiGroups: ['batch'],
    resources: ['jobs', 'cronjobs'],
    verbs: ['get', 'list', 'watch'],
  },
  {
    apiGroups: ['networking.k8s.io'],
    resources: ['ingresses'],
    verbs: ['get', 'list', 'watch'],
  },
  ...shippedRules('pvc-pruner-rbac.yaml'),
  ...shippedRules('pvc-pruner-snapshots-rbac.yaml'),
];

/**
 * The second cluster, "warehouse": reached through the catalog locator (a
 * kubernetes-cluster Resource this writes to the state folder, since its
 * address is only known now), with an x509 client certificate for user
 * `backstage` in group `backstage`, which gets BACKSTAGE_RULES.
 */
async function startWarehouseCluster(run: DemoRun, timeFactor: number) {
  const cluster = await startKubeSim({
    https: true,
    scenario: loadScenario(
      join(ROOT, 'test/kube-sim/scenarios/warehouse.yaml'),
    ),
    timeFactor,
  });
  run.warehouseSim = cluster;
  const client = cluster.issueClientCertificate({
    user: 'backstage',
    groups: ['backstage'],
  });
  cluster.addBinding({
    subjects: [{ kind: 'Group', name: 'backstage' }],
    rules: BACKSTAGE_RULES,
  });
  writeFileSync(
    join(run.stateDir, 'warehouse-cluster.yaml'),
    stringifyYaml({
      apiVersion: 'backstage.io/v1alpha1',
      kind: 'Resource',
      metadata: {
        name: 'warehouse',
        title: 'Warehouse',
        description:
          "The demo's second cluster, found by the catalog cluster locator (written by test/demo/start.ts)",
        annotations: {
          'kubernetes.io/api-server': cluster.url,
          'kubernetes.io/api-server-certificate-authority': base64(
            cluster.caCert!,
          ),
          'kubernetes.io/auth-provider': 'x509',
        },
      },
      spec: { type: 'kubernetes-cluster', owner: 'group:default/checkout' },
    }),
  );
  return { client, kubeconfig: cluster.kubeconfig };
}

/** One kubeconfig with a context per cluster (each simulator's admin), the first one current. */
function mergeKubeconfigs(configs: Record<string, string>) {
  const merged = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [] as unknown[],
    users: [] as unknown[],
    contexts: [] as unknown[],
    'current-context': Object.keys(configs)[0],
  };
  for (const [name, yaml] of Object.entries(configs)) {
    const config = parseYaml(yaml);
    merged.clusters.push({ name, cluster: config.clusters[0].cluster });
    merged.users.push({ name: `${name}-admin`, user: config.users[0].user });
    merged.contexts.push({
      name,
      context: {
        ...config.contexts[0].context,
        cluster: name,
        user: `${name}-admin`,
      },
    });
  }
  return merged;
}

/** The entity opted into automatic pruning (dev/catalog-info.yaml), the only claimant of recommendations-db. */
export const AUTO_PRUNE_ENTITY_REF = 'component:default/recommendations';

/** recommendations-db, the StatefulSet whose orphans its entity opted into automatic pruning. */
const AUTO_PRUNE_SCENARIO = join(
  ROOT,
  'test/kube-sim/scenarios/demo-auto-prune.yaml',
);

/**
 * Starts both clusters (kept in `run`, so that stopping closes them), gives
 * Backstage's service account BACKSTAGE_RULES in "demo", and writes the
 * kubeconfig. Returns what the backend authenticates with. With `autoPrune`,
 * "demo" also has recommendations-db and its orphans.
 */
export async function startDemoClusters(
  run: DemoRun,
  timeFactor: number,
  options: { autoPrune: boolean },
) {
  const scenario = options.autoPrune
    ? [...loadScenario('demo'), ...loadScenario(AUTO_PRUNE_SCENARIO)]
    : 'demo';
  const sim = await startKubeSim({ https: true, scenario, timeFactor });
  run.sim = sim;
  const backstageToken = sim.addToken({
    user: 'system:serviceaccount:backstage:backstage',
    rules: BACKSTAGE_RULES,
  });
  const warehouse = await startWarehouseCluster(run, timeFactor);
  writeFileSync(
    run.kubeconfig,
    stringifyYaml(
      mergeKubeconfigs({
        demo: sim.kubeconfig,
        warehouse: warehouse.kubeconfig,
      }),
    ),
    { mode: 0o600 },
  );
  return { sim, backstageToken, warehouseClient: warehouse.client };
}
