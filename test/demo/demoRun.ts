/*
 * The state of one `npm start` run, passed to every part of the demo that
 * reads or changes it, and the few helpers they all use.
 */
import { join, relative, resolve } from 'node:path';
import { KubeSim } from 'kube-sim';
import type { Child } from './childProcesses';
import type { Supervisor } from './supervisor';

export const ROOT = resolve(__dirname, '../..');
export const CLI = require.resolve('@backstage/cli/bin/backstage-cli', {
  paths: [ROOT],
});

// The ports of app-config.yaml (backend.baseUrl, app.baseUrl); --backend-port
// and --frontend-port override them through APP_CONFIG_* variables.
export const DEFAULT_BACKEND_PORT = 7007;
export const DEFAULT_FRONTEND_PORT = 3000;
export const READY_TIMEOUT_MS = 5 * 60_000;
export const STOP_TIMEOUT_MS = 10_000;

/** One run of the demo: where it keeps its files, what it started, and how far it got. */
export interface DemoRun {
  /** When the run began (start-up time and the readiness deadline count from it). */
  readonly started: number;
  /** The state folder (--state-dir): databases, kubeconfig and logs. */
  stateDir: string;
  logDir: string;
  kubeconfig: string;
  backendUrl: string;
  frontendUrl: string;
  /** Show all child output, not only warnings and errors (--verbose). */
  verbose: boolean;
  /** Set once stopping began; nothing starts or waits after that. */
  stopping: boolean;
  /** Set once the demo said it is ready. */
  ready: boolean;
  readonly children: Child[];
  sim?: KubeSim;
  warehouseSim?: KubeSim;
  backendSupervisor?: Supervisor;
}

/** A run with the defaults: state in .demo/, the ports of app-config.yaml. */
export function createDemoRun(): DemoRun {
  const run: DemoRun = {
    started: Date.now(),
    stateDir: '',
    logDir: '',
    kubeconfig: '',
    backendUrl: `http://localhost:${DEFAULT_BACKEND_PORT}`,
    frontendUrl: `http://localhost:${DEFAULT_FRONTEND_PORT}`,
    verbose: false,
    stopping: false,
    ready: false,
    children: [],
  };
  setStateDir(run, join(ROOT, '.demo'));
  return run;
}

export function setStateDir(run: DemoRun, stateDir: string) {
  run.stateDir = stateDir;
  run.logDir = join(stateDir, 'logs');
  run.kubeconfig = join(stateDir, 'kubeconfig');
}

/** A path for people: relative to the working folder when inside it. */
export const shown = (path: string) => {
  const rel = relative(process.cwd(), path);
  return rel && !rel.startsWith('..') ? rel : path;
};
export const say = (line: string) => process.stdout.write(`${line}\n`);
export const sleep = (ms: number) => new Promise(r => setTimeout(r, ms));
export const base64 = (text: string) => Buffer.from(text).toString('base64');
