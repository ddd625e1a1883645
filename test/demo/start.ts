/*
 * `npm start`: the pvc-pruner demo portal, all in one terminal.
 *
 *   1. two Kubernetes API simulators (test/kube-sim) over https, in this
 *      process: "demo" (the demo scenario, a service-account token in
 *      app-config.yaml) and "warehouse" (scenarios/warehouse.yaml, found
 *      through the catalog locator, reached with an x509 client certificate);
 *      .demo/kubeconfig has a context for each (demoClusters.ts);
 *   2. the demo backend (plugins/pvc-pruner-backend, `backstage-cli package start`),
 *      pointed at the simulator through the PVC_PRUNER_DEMO_* variables that
 *      app-config.yaml substitutes, restarted by supervisor.ts when it dies
 *      (demoBackend.ts);
 *   3. the frontend dev app (plugins/pvc-pruner, `backstage-cli package start`).
 *
 * It waits until each is ready (readiness.ts), prints one ready line, and
 * stops everything on Ctrl-C (cli.ts). Child output goes to .demo/logs/; the
 * terminal shows only warnings and errors (all of it with --verbose)
 * (childProcesses.ts). demoRun.ts holds the state of one run.
 *
 * Run: node --require @backstage/cli/config/nodeTransform.cjs test/demo/start.ts [--verbose] [--reset] [--time-factor F]
 *        [--state-dir DIR] [--backend-port N] [--frontend-port N]
 *
 * `startDemo()` (startDemo.ts) runs this script in a child process for the
 * browser tests (test/e2e) and the frontend benchmark (test/bench), with a
 * temporary state folder and ports of their own, so that they run beside a
 * developer's demo.
 */
import { runCli } from './cli';

export { BACKSTAGE_RULES } from './demoClusters';
export { demoBackendEnv } from './demoBackend';
export {
  guestToken,
  requireGuestIdentity,
  requireGuestToken,
} from './readiness';
export type { GuestIdentity } from './readiness';
export { startDemo } from './startDemo';
export type { RunningDemo, StartDemoOptions } from './startDemo';

if (require.main === module) runCli();
