/*
 * A second `npm start` on the same state folder (the databases kept, no
 * --reset): both clusters answer as soon as the demo says it is ready, though
 * the catalog still held the warehouse Resource of the first run, with the
 * address of a simulator that is gone.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Demo, ordersClusters, startDemo } from './__testUtils__/demo';

jest.setTimeout(8 * 60_000);

const stateDir = mkdtempSync(join(tmpdir(), 'pvc-pruner-demo-rerun-'));
let demo: Demo | undefined;

afterAll(async () => {
  await demo?.stop();
  rmSync(stateDir, { recursive: true, force: true });
});

it('reaches both clusters right after a restart of the demo that keeps its catalog', async () => {
  demo = await startDemo({ stateDir });
  const firstUrl = demo.cluster.url;
  expect(await ordersClusters(demo.backendUrl)).toEqual([
    ['demo', true],
    ['warehouse', true],
  ]);
  await demo.stop();

  demo = await startDemo({ stateDir, reset: false });
  expect(demo.cluster.url).not.toBe(firstUrl); // new simulators, new addresses
  expect(await ordersClusters(demo.backendUrl)).toEqual([
    ['demo', true],
    ['warehouse', true],
  ]);
});
