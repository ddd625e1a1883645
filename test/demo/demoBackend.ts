/*
 * The demo backend (plugins/pvc-pruner-backend, `backstage-cli package
 * start`): its environment, pointed at the simulator through the
 * PVC_PRUNER_DEMO_* variables that app-config.yaml substitutes, and one run
 * of it for the restart supervisor.
 */
import { groupAlive, signalGroup, startChild } from './childProcesses';
import { base64, DemoRun, sleep } from './demoRun';
import { sayWhenServing } from './readiness';
import { SupervisedProcess } from './supervisor';

/** The environment of the demo backend (dev/index.ts and app-config.yaml read it): the cluster to use and where its SQLite files go. */
export function demoBackendEnv(options: {
  stateDir: string;
  kubeUrl: string;
  kubeToken: string;
  /** PEM of the cluster's CA. */
  kubeCa: string;
  /** The client certificate (PEM) the demo's second cluster, warehouse, authenticates. */
  warehouseClient?: { cert: string; key: string };
}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    NODE_ENV: 'development',
    BROWSER: 'none',
    PVC_PRUNER_DEMO_DIR: options.stateDir,
    PVC_PRUNER_DEMO_KUBE_URL: options.kubeUrl,
    PVC_PRUNER_DEMO_KUBE_TOKEN: options.kubeToken,
    PVC_PRUNER_DEMO_KUBE_CA: base64(options.kubeCa),
    ...(options.warehouseClient
      ? {
          PVC_PRUNER_DEMO_WAREHOUSE_CLIENT_CERT: base64(
            options.warehouseClient.cert,
          ),
          PVC_PRUNER_DEMO_WAREHOUSE_CLIENT_KEY: base64(
            options.warehouseClient.key,
          ),
        }
      : {}),
  };
}

/**
 * One run of the backend, for the supervisor. `backstage-cli package start`
 * restarts its server only on a file change, so when the server process
 * dies the CLI is killed too and the run has ended; it has also ended when
 * the CLI exits. Either way, once nothing of its process group is left.
 */
export function launchBackend(
  run: DemoRun,
  env: NodeJS.ProcessEnv,
): SupervisedProcess {
  const restart = run.ready;
  const previous = run.children.findIndex(c => c.name === 'backend');
  if (previous >= 0) run.children.splice(previous, 1)[0].log.end();
  const child = startChild(run, 'backend', 'plugins/pvc-pruner-backend', env, {
    serverProcess: true,
    supervised: true,
  });
  let serverDown = false;
  child.onServerDown = () => {
    serverDown = true;
    signalGroup(child, 'SIGKILL');
  };
  if (restart) void sayWhenServing(run, child);
  return {
    ended: child.exit.then(async () => {
      while (groupAlive(child)) await sleep(100);
      return serverDown ? 'its server process died' : child.exitReason!;
    }),
  };
}
