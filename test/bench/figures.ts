import { join } from 'node:path';
import { Dispatcher, request } from 'undici';
import type { ForkedScript } from 'kube-sim/bench/forkScript';
import type { SimRequest } from './simProcess';
import type { BackendRequest } from './backendProcess';

/** Helpers the benchmark scripts share: how they fetch and how they print figures. */

export const ms = (n: number) => `${n.toFixed(0)} ms`;

/** The value at fraction `p` (0..1) of the sorted values. */
export const percentile = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[
    Math.min(xs.length - 1, Math.floor(xs.length * p))
  ];

export const median = (xs: number[]) => percentile(xs, 0.5);

/** GETs JSON, throwing on anything but a 200. */
export async function getJson(
  url: string,
  dispatcher: Dispatcher,
  headers: Record<string, string> = {},
): Promise<any> {
  const res = await request(url, {
    headers: { accept: 'application/json', ...headers },
    dispatcher,
  });
  const body = (await res.body.json()) as any;
  if (res.statusCode !== 200)
    throw new Error(`${url}: ${res.statusCode} ${JSON.stringify(body)}`);
  return body;
}

/** A benchmark that did not measure what it names: it stops instead of printing a figure. */
export class BenchmarkError extends Error {
  name = 'BenchmarkError';
}

/** Throws a BenchmarkError unless `actual` is `expected`; `what` names the count. */
export function expectEqual<T>(what: string, actual: T, expected: T) {
  if (actual !== expected)
    throw new BenchmarkError(
      `${what}: ${JSON.stringify(actual)}, expected ${JSON.stringify(
        expected,
      )}; the figure would not measure what it names`,
    );
}

/** The orphans of SCAN_NAMESPACE. */
export const SCAN_ORPHANS = 500;

/** The namespace both benchmarks scan: 100 StatefulSets of 100 claims, 5 orphans each (10,000 claims, 9,500 pods, 10,000 volumes). */
export const SCAN_NAMESPACE: SimRequest = {
  type: 'seed',
  namespace: 'scan',
  id: 'scan',
  sets: 100,
  perSet: 100,
  orphansPerSet: 5,
};

/**
 * With BENCH_CPU_PROFILE=<folder>, a CPU profile of the backend from now
 * until `stop` (a figure's measured rounds), written as <figure>.cpuprofile
 * for DevTools; otherwise nothing.
 */
export async function profiled(
  backend: ForkedScript<unknown, BackendRequest>,
  figure: string,
) {
  const folder = process.env.BENCH_CPU_PROFILE;
  if (folder) await backend.ask({ type: 'startCpuProfile' });
  return {
    stop: async () => {
      if (folder)
        await backend.ask({
          type: 'stopCpuProfile',
          path: join(folder, `${figure}.cpuprofile`),
        });
    },
  };
}
