/*
 * The demo comes back by itself (test/demo/start.ts and its supervisor).
 * First its backend: the server process killed with SIGKILL, then the
 * `backstage-cli package start` running it, with no file change in between,
 * which is all `backstage-cli package start` alone would wait for. Then the
 * whole demo stopped and started again on the same state folder (the
 * databases kept, no --reset): both clusters answer as soon as it says it is
 * ready, though the catalog still held the warehouse Resource of the first
 * run, with the address of a simulator that is gone. No browser: the portal's
 * API answers the guest.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Demo, ordersClusters, startDemo } from './__testUtils__/demo';

jest.setTimeout(6 * 60_000);

const sleep = (ms: number) => new Promise(r => setTimeout(r, ms));

function alive(pid: number) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const stateDir = mkdtempSync(join(tmpdir(), 'pvc-pruner-demo-recovery-'));
let demo: Demo;

beforeAll(async () => {
  demo = await startDemo({ stateDir });
});

afterAll(async () => {
  await demo?.stop();
  rmSync(stateDir, { recursive: true, force: true });
});

async function until<T>(
  what: string,
  check: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 120_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await Promise.resolve(check()).catch(() => undefined);
    if (value) return value;
    if (Date.now() > deadline)
      throw new Error(
        `timed out waiting for ${what}; the demo printed:\n${demo.output()}`,
      );
    await sleep(250);
  }
}

/** Whether pvc-pruner answers its health check; false while nothing listens. */
const healthy = () =>
  fetch(`${demo.backendUrl}/api/pvc-pruner/health`, {
    signal: AbortSignal.timeout(2000),
  }).then(
    res => res.ok,
    () => false,
  );

/** Kills `pid` with SIGKILL and waits until the backend serves again, from a new server process. */
async function killAndWaitForRestart(pid: number, said: RegExp) {
  const before = demo.backendProcesses();
  const printed = demo.output().length;
  process.kill(pid, 'SIGKILL');
  await until('the backend to be down', async () => !(await healthy()), 10_000);
  await until('the demo to say it restarts the backend', () =>
    said.test(demo.output().slice(printed)),
  );
  await until('the demo to say the backend serves again', () =>
    demo
      .output()
      .slice(printed)
      .includes(`[backend] backend is serving again at ${demo.backendUrl}`),
  );
  expect(await healthy()).toBe(true);
  const after = demo.backendProcesses();
  expect(after.server).toEqual(expect.any(Number));
  expect(after.server).not.toBe(before.server);
  // what the killed run started is gone, not left beside the new one
  for (const old of [before.cli!, before.server!])
    await until(`process ${old} to be gone`, () => !alive(old), 10_000);
}

it('restarts the backend when its server process is killed', async () => {
  expect(await ordersClusters(demo.backendUrl)).toEqual([
    ['demo', true],
    ['warehouse', true],
  ]);
  const { server } = demo.backendProcesses();
  expect(server).toEqual(expect.any(Number));
  await killAndWaitForRestart(
    server!,
    /\[backend\] backend exited \(its server process died\), restarting in 1 s/,
  );
  expect(await ordersClusters(demo.backendUrl)).toEqual([
    ['demo', true],
    ['warehouse', true],
  ]);
});

it('restarts the backend when the CLI running it is killed', async () => {
  const { cli } = demo.backendProcesses();
  expect(cli).toEqual(expect.any(Number));
  // (the delay depends on how long the last run lasted: supervisor.test.ts)
  await killAndWaitForRestart(
    cli!,
    /\[backend\] backend exited \(signal SIGKILL\), restarting in [\d.]+ s/,
  );
  expect(await ordersClusters(demo.backendUrl)).toEqual([
    ['demo', true],
    ['warehouse', true],
  ]);
});

it('reaches both clusters right after a restart of the demo that keeps its catalog', async () => {
  const firstUrl = demo.cluster.url;
  await demo.stop();
  demo = await startDemo({ stateDir, reset: false });
  expect(demo.cluster.url).not.toBe(firstUrl); // new simulators, new addresses
  expect(await ordersClusters(demo.backendUrl)).toEqual([
    ['demo', true],
    ['warehouse', true],
  ]);
});
