/*
 * The `npm start` command line: reads the flags, starts the clusters, the
 * backend (under a restart supervisor) and the frontend, waits until each is
 * ready and prints one ready line. Ctrl-C stops everything.
 */
import { mkdirSync, readdirSync, rmSync, existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import {
  startChild,
  stop,
  stopOnSignals,
  watchServerProcesses,
} from './childProcesses';
import { demoBackendEnv, launchBackend } from './demoBackend';
import { AUTO_PRUNE_ENTITY_REF, startDemoClusters } from './demoClusters';
import {
  createDemoRun,
  DEFAULT_BACKEND_PORT,
  DEFAULT_FRONTEND_PORT,
  DemoRun,
  say,
  setStateDir,
  shown,
} from './demoRun';
import { leaveDeletedStatefulSet, pluginOverHttp } from './deletedStatefulSet';
import { guestToken, waitForBackend, waitForFrontend } from './readiness';
import { Supervisor } from './supervisor';

const USAGE = `Usage: npm start [-- [--verbose] [--reset] [--no-auto-prune] [--time-factor F] [--state-dir DIR] [--backend-port N] [--frontend-port N]]
  --verbose          show all output of the backend and the frontend dev server (default: warnings and errors)
  --no-auto-prune    leave out recommendations-db, the StatefulSet whose orphans are pruned automatically, and turn automatic pruning off
  --reset            delete the demo databases in the state folder first (job history, catalog)
  --time-factor F    simulated-time factor of the cluster (default 0.2: a 10 s grace period takes 2 s)
  --state-dir DIR    where the databases, kubeconfig and logs go (default .demo/)
  --backend-port N   the backend's port (default ${DEFAULT_BACKEND_PORT})
  --frontend-port N  the frontend dev server's port (default ${DEFAULT_FRONTEND_PORT})`;

async function portFree(port: number) {
  return new Promise<boolean>(resolvePort => {
    const server = createServer();
    server.once('error', () => resolvePort(false));
    server.listen(port, () => server.close(() => resolvePort(true)));
  });
}

async function main(run: DemoRun) {
  const { values } = parseArgs({
    options: {
      verbose: { type: 'boolean', default: false },
      reset: { type: 'boolean', default: false },
      'no-auto-prune': { type: 'boolean', default: false },
      'time-factor': { type: 'string', default: '0.2' },
      'state-dir': { type: 'string' },
      'backend-port': { type: 'string', default: String(DEFAULT_BACKEND_PORT) },
      'frontend-port': {
        type: 'string',
        default: String(DEFAULT_FRONTEND_PORT),
      },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    say(USAGE);
    return;
  }
  run.verbose = Boolean(values.verbose);
  const timeFactor = Number(values['time-factor']);
  if (!(timeFactor > 0))
    throw new Error(`--time-factor must be a positive number\n${USAGE}`);

  const backendPort = Number(values['backend-port']);
  const frontendPort = Number(values['frontend-port']);
  for (const option of ['backend-port', 'frontend-port'] as const) {
    const port = Number(values[option]);
    if (!Number.isInteger(port) || port <= 0 || port > 65535)
      throw new Error(`--${option} ${values[option]} is not a port\n${USAGE}`);
  }
  run.backendUrl = `http://localhost:${backendPort}`;
  run.frontendUrl = `http://localhost:${frontendPort}`;
  if (values['state-dir']) setStateDir(run, resolve(values['state-dir']));
  const { backendUrl, frontendUrl } = run;

  for (const port of [backendPort, frontendPort]) {
    if (!(await portFree(port))) {
      throw new Error(
        `port ${port} is in use (is another demo running?); the demo needs ports ${backendPort} and ${frontendPort}`,
      );
    }
  }
  mkdirSync(run.logDir, { recursive: true });
  if (values.reset) {
    for (const file of readdirSync(run.stateDir).filter(f =>
      /\.sqlite(-wal|-shm|-journal)?$/.test(f),
    ))
      rmSync(join(run.stateDir, file));
    say(`Deleted the demo databases in ${shown(run.stateDir)}/`);
  }

  stopOnSignals(run);

  const autoPrune = !values['no-auto-prune'];
  const { sim, backstageToken, warehouseClient } = await startDemoClusters(
    run,
    timeFactor,
    { autoPrune },
  );
  const env = demoBackendEnv({
    stateDir: run.stateDir,
    kubeUrl: sim.url,
    kubeToken: backstageToken,
    kubeCa: sim.caCert ?? '',
    warehouseClient,
  });
  // app-config.yaml turns automatic pruning on for recommendations-db.
  if (!autoPrune) env.APP_CONFIG_pvcPruner_autoPrune_enabled = 'false';
  // Other ports than app-config.yaml's: override its URLs for both processes.
  if (backendPort !== DEFAULT_BACKEND_PORT) {
    env.APP_CONFIG_backend_baseUrl = backendUrl;
    env.APP_CONFIG_backend_listen_port = String(backendPort);
  }
  if (frontendPort !== DEFAULT_FRONTEND_PORT) {
    env.APP_CONFIG_app_baseUrl = frontendUrl;
    env.APP_CONFIG_backend_cors_origin = frontendUrl;
  }
  say(
    `Starting the pvc-pruner demo: cluster ${
      sim.url
    } (time factor ${timeFactor}), backend and frontend (logs in ${shown(
      run.logDir,
    )}/)…`,
  );
  const backendSupervisor = Supervisor.create({
    name: 'backend',
    launch: () => launchBackend(run, env),
    say,
    onGiveUp: () => void stop(run, 1),
  });
  run.backendSupervisor = backendSupervisor;
  backendSupervisor.start();
  startChild(run, 'frontend', 'plugins/pvc-pruner', env);
  watchServerProcesses(run);

  await Promise.all([waitForBackend(run), waitForFrontend(run)]);
  if (run.stopping) return;
  const plugin = pluginOverHttp(backendUrl, (await guestToken(backendUrl))!);
  // A StatefulSet deleted before the demo starts, its claims left behind (with lineage).
  await leaveDeletedStatefulSet(sim, plugin);
  // A scan records when recommendations-db's orphans were first seen: their grace starts now.
  if (autoPrune) await plugin.scan(AUTO_PRUNE_ENTITY_REF);
  if (run.stopping) return;
  run.ready = true;

  const seconds = ((Date.now() - run.started) / 1000).toFixed(1);
  const FIRST_PAGE = `${frontendUrl}/catalog/default/component/orders/kubernetes`;
  const kubeconfig = shown(run.kubeconfig);
  say(
    `pvc-pruner demo ready in ${seconds} s: open ${FIRST_PAGE} (backend ${backendUrl}, cluster ${sim.url})`,
  );
  say(
    `  Scale a StatefulSet and watch the card follow: kubectl --kubeconfig ${kubeconfig} -n shop scale sts orders-db --replicas=1`,
  );
  if (autoPrune)
    say(
      `  Automatic pruning: recommendations-db's orphans go in about 2 minutes, a snapshot each first; data-recommendations-db-3 is kept. Notices at ${frontendUrl}/notifications`,
    );
  say(
    `  Pages: orders, cart, search-index (another team's), recommendations, and every team's orphans at ${frontendUrl}/pvc-pruner. Logs: ${shown(
      run.logDir,
    )}/. Ctrl-C stops everything.`,
  );
}

/** Runs the demo as `npm start` does; a failure is one line, and stops what was started. */
export function runCli() {
  const run = createDemoRun();
  main(run).catch(e => {
    say(`demo: ${e instanceof Error ? e.message : e}`);
    if (existsSync(run.logDir) && run.children.length > 0)
      say(`Logs: ${shown(run.logDir)}/`);
    void stop(run, 1);
  });
}
