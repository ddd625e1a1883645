/*
 * The safety campaign: `npm run campaign -- --scenarios N --seed S [--replicas R]`.
 *
 * Starts the Kubernetes API simulator (in this process, recording its own
 * history) and R demo backends (each its own process and port, all on one
 * new PostgreSQL database), runs N scenarios drawn from the seed one after
 * another, judges each with the oracle, and prints a report. Exits 1 when
 * any scenario broke an invariant. `--replay <scenario seed>` runs one
 * scenario again.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startKubeSim } from 'kube-sim';
// test/demo is the repository's demo script, not a package: the campaign
// runs the same backend, with the same cluster rules and guest sign-in.
// eslint-disable-next-line @backstage/no-relative-monorepo-imports
import { BACKSTAGE_RULES, requireGuestIdentity } from '../../demo/start';
import { BackendClient } from './backendClient';
import { CampaignCatalog } from './campaignCatalog';
import { createStorageClasses } from './cluster';
import {
  createRunDatabase,
  DEFAULT_POSTGRES_URL,
  NoPostgresError,
} from './database';
import { judge } from './oracle';
import { scenarioSeed } from './random';
import { freePort, Replica } from './replicas';
import {
  formatReport,
  replayCommand,
  ScenarioResult,
  unexercised,
} from './report';
import { failedRun, RunContext, runScenario } from './runScenario';
import { generateScenario, SIM_TIME_FACTOR, USER_ENTITY } from './scenario';

const USAGE = `Usage: npm run campaign -- [--scenarios N] [--seed S] [--replicas R] [--replay SCENARIO_SEED] [--max-minutes M] [--keep-logs]
  --scenarios N     how many scenarios (default 20)
  --seed S          the campaign's seed; scenario i's seed is derived from it (default: random)
  --replicas R      backend replicas (default 2)
  --replay X[,Y…]   run the scenarios of these seeds (as a failure prints them)
  --max-minutes M   start no new scenario after M minutes
  --keep-logs       keep the replicas' logs (their folder is printed)
  --without-auto-prune  replicas without pvcPruner.autoPrune (the scenarios' opt-ins automate nothing; deletions no prune confirmed are flagged)`;

const LEASE_SECONDS = 3;
/** How long a job waits for each snapshot: some drawn snapshots are slower (src/scenario.ts). */
const SNAPSHOT_TIMEOUT_SECONDS = 3;
const say = (line: string) => process.stdout.write(`${line}\n`);

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      scenarios: { type: 'string', default: '20' },
      seed: { type: 'string' },
      replicas: { type: 'string', default: '2' },
      replay: { type: 'string' },
      'max-minutes': { type: 'string' },
      'keep-logs': { type: 'boolean', default: false },
      'without-auto-prune': { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    say(USAGE);
    return 0;
  }
  const count = Number(values.scenarios);
  const replicaCount = Number(values.replicas);
  const seed =
    values.seed !== undefined
      ? Number(values.seed)
      : Math.floor(Math.random() * 2 ** 31);
  const maxMs = values['max-minutes']
    ? Number(values['max-minutes']) * 60000
    : Infinity;
  if (!Number.isInteger(count) || count < 1)
    throw new Error(`--scenarios must be a positive integer\n${USAGE}`);
  if (!Number.isInteger(replicaCount) || replicaCount < 1)
    throw new Error(`--replicas must be a positive integer\n${USAGE}`);
  if (!Number.isInteger(seed))
    throw new Error(`--seed must be an integer\n${USAGE}`);
  const seeds =
    values.replay !== undefined
      ? values.replay.split(',').map(Number)
      : Array.from({ length: count }, (_, i) => scenarioSeed(seed, i));

  const started = Date.now();
  const workDir = mkdtempSync(join(tmpdir(), 'pvc-pruner-campaign-'));
  const sim = await startKubeSim({
    https: true,
    recordHistory: true,
    timeFactor: SIM_TIME_FACTOR,
    historyLimit: 50000,
  });
  createStorageClasses(sim);
  const database = await createRunDatabase(
    DEFAULT_POSTGRES_URL,
    `pvc_pruner_campaign_${seed}_${Date.now()}`,
  );
  const replicas: Replica[] = [];
  let stopping = false;
  const stopAll = async () => {
    await Promise.allSettled(replicas.map(r => r.stop()));
    await sim.close().catch(() => undefined);
    await database
      .drop()
      .catch(e => say(`could not drop the campaign database: ${e}`));
    if (!values['keep-logs']) rmSync(workDir, { recursive: true, force: true });
  };
  process.on('exit', () => replicas.forEach(r => r.killNow()));
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) process.exit(130);
    stopping = true;
    say(`${signal}: stopping the replicas and the simulator…`);
    void stopAll().then(() => process.exit(130));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  try {
    const catalogFile = join(workDir, 'campaign-catalog.yaml');
    CampaignCatalog.writeEmpty(catalogFile);
    const settings = {
      catalogFile,
      databaseUrl: database.url,
      kubeUrl: sim.url,
      kubeCa: sim.caCert!,
      leaseDurationSeconds: LEASE_SECONDS,
      clusterRequestTimeoutSeconds: 4,
      volumeWaitTimeoutSeconds: 4,
      snapshotTimeoutSeconds: SNAPSHOT_TIMEOUT_SECONDS,
      workDir,
      autoPrune: !values['without-auto-prune'],
    };
    for (let i = 0; i < replicaCount; i++) {
      const user = `system:serviceaccount:backstage:replica-${i}`;
      replicas.push(
        new Replica(
          i,
          await freePort(),
          user,
          sim.addToken({ user, rules: BACKSTAGE_RULES }),
          settings,
        ),
      );
    }
    say(`Starting ${replicaCount} backend replicas (logs in ${workDir})…`);
    // One after another: the catalog's migrations take a lock the others would fail on.
    for (const r of replicas) await r.start();
    const guest = await requireGuestIdentity(replicas[0].url);
    const clients = replicas.map(r => new BackendClient(r.url, guest.token));
    const catalog = new CampaignCatalog(
      catalogFile,
      () => replicas.filter(r => r.alive && !r.frozen).map(r => r.url),
      guest.token,
    );
    const baseCatalog = await catalog.readBase([
      USER_ENTITY,
      'component:default/search-index',
    ]);
    const ctx: RunContext = {
      sim,
      replicas,
      clients,
      catalog,
      baseCatalog,
      ownershipRefs: guest.ownershipEntityRefs,
      autoPrune: settings.autoPrune,
      log: say,
    };
    say(
      `Ready in ${((Date.now() - started) / 1000).toFixed(0)} s; running ${
        seeds.length
      } scenario(s)${values.replay ? '' : ` of seed ${seed}`}.`,
    );

    const results: ScenarioResult[] = [];
    for (const [index, scenarioSeedValue] of seeds.entries()) {
      if (stopping) break;
      if (Date.now() - started > maxMs) {
        say(`--max-minutes reached after ${results.length} scenarios`);
        break;
      }
      const scenario = generateScenario(scenarioSeedValue, {
        replicas: replicaCount,
        leaseDurationSeconds: LEASE_SECONDS,
      });
      let run;
      try {
        run = await runScenario(ctx, scenario);
      } catch (e) {
        run = failedRun(scenario, e as Error);
        for (const r of replicas) {
          r.thaw();
          if (!r.alive) await r.start().catch(() => undefined);
        }
        await catalog.apply([]).catch(() => undefined);
      }
      const judgement = judge(run);
      results.push({ index, seed: scenarioSeedValue, run, judgement });
      const statuses = Object.entries(judgement.jobsByStatus)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ');
      say(
        `[${index + 1}/${seeds.length}] seed ${scenarioSeedValue}: ${
          run.jobs.length
        } job(s)${statuses ? ` (${statuses})` : ''}, ${
          judgement.deletions
        } deletion(s), ${Object.keys(run.faults).join(', ') || 'no faults'}, ${(
          run.durationMs / 1000
        ).toFixed(1)} s: ${
          judgement.violations.length === 0
            ? 'ok'
            : `${judgement.violations.length} violation(s): ${
                judgement.violations[0].invariant
              }; replay: ${replayCommand(scenarioSeedValue, replicaCount)}`
        }`,
      );
      for (const v of judgement.violations.slice(0, 5))
        say(`    ${v.invariant}: ${v.detail}`);
      for (const n of judgement.windowNotes.slice(0, 5))
        say(`    in the check-to-delete window: ${n}`);
      // Drop what the oracle no longer needs: the run holds the whole history.
      run.requests.length = 0;
    }
    say('');
    say(
      formatReport(results, {
        seed: values.replay ? undefined : seed,
        replicas: replicaCount,
        wallMs: Date.now() - started,
      }),
    );
    return results.some(r => r.judgement.violations.length > 0) ||
      results.length === 0 ||
      unexercised(results).length > 0
      ? 1
      : 0;
  } finally {
    if (!stopping) {
      stopping = true;
      await stopAll();
    }
  }
}

main().then(
  code => process.exit(code),
  e => {
    if (e instanceof NoPostgresError) say(`campaign: ${e.message}`);
    else say(`campaign: ${e instanceof Error ? e.stack : e}`);
    process.exit(2);
  },
);
