/*
 * The demo portal for the browser tests: test/demo/start.ts (the Kubernetes
 * API simulator, the demo backend and the frontend dev app), started in a
 * fresh temporary state folder and on ports of its own, so that a
 * developer's `npm start` (ports 7007 and 3000, state in .demo/) can run
 * beside it. Plus kubectl against its cluster, and the guest's token.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
// test/demo is the repository's demo script, not a package; its startDemo()
// is how the tests and the benchmarks run the demo.
// eslint-disable-next-line @backstage/no-relative-monorepo-imports
import {
  requireGuestToken,
  RunningDemo,
  startDemo as startDemoProcess,
} from '../../../demo/start';

/** The guest's Backstage token, as the sign-in page gets it. */
export const guestToken = requireGuestToken;

const KUBECTL = process.env.KUBECTL_PATH ?? '/usr/bin/kubectl';
const execFileAsync = promisify(execFile);

/** Ports of the test's demo (E2E_BACKEND_PORT / E2E_FRONTEND_PORT override them). */
const BACKEND_PORT = Number(process.env.E2E_BACKEND_PORT ?? 7017);
const FRONTEND_PORT = Number(process.env.E2E_FRONTEND_PORT ?? 3017);

/** A running demo, with kubectl. */
export interface Demo extends RunningDemo {
  /** kubectl against the demo cluster, with a cache folder of its own; resolves to stdout. */
  kubectl(...args: string[]): Promise<string>;
  /** The names of the claims in a namespace (`kubectl get pvc -o name`), sorted. */
  claims(namespace: string): Promise<string[]>;
}

/**
 * Options of the demo: a state folder of the caller's, kept unless `reset`
 * (default true); `autoPrune` adds recommendations-db and turns automatic
 * pruning on, as `npm start` does (default false).
 */
export async function startDemo(
  options: { stateDir?: string; reset?: boolean; autoPrune?: boolean } = {},
): Promise<Demo> {
  const demo = await startDemoProcess({
    ...options,
    backendPort: BACKEND_PORT,
    frontendPort: FRONTEND_PORT,
    // npm start's pace: a 10 s grace period takes 2 s.
    timeFactor: 0.2,
  });
  const kubectl = async (...args: string[]) => {
    const { stdout } = await execFileAsync(
      KUBECTL,
      [
        '--kubeconfig',
        demo.kubeconfig,
        '--cache-dir',
        join(demo.stateDir, 'kube-cache'),
        ...args,
      ],
      { timeout: 60_000 },
    );
    return stdout;
  };
  return {
    ...demo,
    kubectl,
    async claims(namespace) {
      const out = await kubectl('-n', namespace, 'get', 'pvc', '-o', 'name');
      return out
        .split('\n')
        .filter(Boolean)
        .map(line => line.replace(/^persistentvolumeclaim\//, ''))
        .sort();
    },
  };
}

/** What the card asks first: the guest's view of orders' clusters, as [cluster, ok]. */
export async function ordersClusters(
  backendUrl: string,
): Promise<Array<[string, boolean]>> {
  const token = await guestToken(backendUrl);
  const res = await fetch(
    `${backendUrl}/api/pvc-pruner/v1/orphans?entityRef=component:default/orders`,
    { headers: { Authorization: `Bearer ${token}` } },
  );
  if (!res.ok) throw new Error(`orphans of orders: HTTP ${res.status}`);
  const body = (await res.json()) as {
    clusters: Array<{ cluster: string; ok: boolean }>;
  };
  return body.clusters.map(c => [c.cluster, c.ok]);
}
