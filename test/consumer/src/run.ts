/**
 * The consumer test (`npm run test:consumer`, part of `npm test`): the three
 * plugin packages as a platform team gets them. They are packed, installed
 * with npm into a new folder outside the repository beside the published
 * Backstage packages of the release @backstage/create-app scaffolds, and then:
 * a backend (catalog, permissions, guest sign-in, pvc-pruner) is started
 * against the simulator and answers /health, a scan and a dry run; an app
 * importing the card and the /alpha extensions is type-checked and bundled.
 * See README.md beside this folder for what it proves and what it does not.
 */
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  writeFileSync,
} from 'node:fs';
import { spawn } from 'node:child_process';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { startKubeSim } from 'kube-sim';
import { exportsModule, readReportedExports } from './apiReports';
import { ConsumerBackend } from './consumerBackend';
import {
  checkDeclaredImports,
  checkNoSecondCopies,
  checkResolvedFromTarballs,
  InstalledTree,
} from './installedTree';
import { PluginChecks } from './pluginChecks';
import { run } from './processes';
import {
  checkConfigSchema,
  checkMigrations,
  checkSameFiles,
} from './runtimeFiles';

// A script run from its source, never built, so __dirname is this folder.
/* eslint-disable no-restricted-syntax */
const ROOT = resolve(__dirname, '../../..');
const FIXTURE = resolve(__dirname, '../fixture');
/* eslint-enable no-restricted-syntax */

interface Plugin {
  dir: string;
  name: string;
  version: string;
}

const plugins: Record<'common' | 'backend' | 'frontend', Plugin> = {
  common: pluginAt('plugins/pvc-pruner-common'),
  backend: pluginAt('plugins/pvc-pruner-backend'),
  frontend: pluginAt('plugins/pvc-pruner'),
};

function pluginAt(dir: string): Plugin {
  const { name, version } = JSON.parse(
    readFileSync(join(ROOT, dir, 'package.json'), 'utf8'),
  );
  return { dir: join(ROOT, dir), name, version };
}

const results: Array<{ name: string; problems: string[] }> = [];

function say(line: string) {
  process.stdout.write(`consumer: ${line}\n`);
}

/** Runs one check; a check fails with the problems it returns or the error it throws. */
async function check(name: string, body: () => Promise<string[] | void>) {
  const started = Date.now();
  let problems: string[];
  try {
    problems = (await body()) ?? [];
  } catch (e) {
    problems = [e instanceof Error ? e.message : String(e)];
  }
  results.push({ name, problems });
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  say(`${problems.length === 0 ? 'ok  ' : 'FAIL'} ${name} (${seconds} s)`);
  for (const problem of problems)
    say(`       ${problem.replace(/\n/g, '\n       ')}`);
  return problems.length === 0;
}

function postgresUrl(): string {
  const entry = Object.entries(process.env).find(([key]) =>
    /^BACKSTAGE_TEST_DATABASE_POSTGRES\d+_CONNECTION_STRING$/.test(key),
  );
  if (!entry?.[1])
    throw new Error(
      'no PostgreSQL: run `npm run test:consumer` at the repository root, which starts one',
    );
  return entry[1];
}

/** A folder outside the repository, where no parent's node_modules can lend a package. */
function consumerFolder(): string {
  const dir = mkdtempSync(join(tmpdir(), 'pvc-pruner-consumer-'));
  if (!relative(ROOT, dir).startsWith('..'))
    throw new Error(
      `${dir} is inside the repository (${ROOT}); set TMPDIR elsewhere`,
    );
  for (let parent = dirname(dir); ; parent = dirname(parent)) {
    if (existsSync(join(parent, 'node_modules')))
      throw new Error(
        `${parent}/node_modules would lend packages to ${dir}; set TMPDIR elsewhere`,
      );
    if (dirname(parent) === parent) break;
  }
  return dir;
}

/** The environment for npm in the consumer folder, without what `npm run` in this workspace set. */
function consumerEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(process.env).filter(
      ([key]) =>
        !/^npm_(package|lifecycle)_|^npm_config_(local_prefix|workspaces?|include_workspace_root)$/.test(
          key,
        ) && key !== 'INIT_CWD',
    ),
  );
}

function writeConsumerPackage(dir: string, tarballs: Record<string, string>) {
  const pkg = JSON.parse(readFileSync(join(FIXTURE, 'package.json'), 'utf8'));
  for (const [name, tarball] of Object.entries(tarballs))
    pkg.dependencies[name] = `file:${tarball}`;
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify(pkg, null, 2)}\n`);
  const reports = (plugin: Plugin, report = 'report.api.md') =>
    readReportedExports(join(plugin.dir, report));
  mkdirSync(join(dir, 'generated'));
  writeFileSync(
    join(dir, 'generated/backendExports.ts'),
    exportsModule([
      { specifier: plugins.backend.name, exports: reports(plugins.backend) },
      { specifier: plugins.common.name, exports: reports(plugins.common) },
    ]),
  );
  writeFileSync(
    join(dir, 'generated/frontendExports.ts'),
    exportsModule([
      { specifier: plugins.frontend.name, exports: reports(plugins.frontend) },
      {
        specifier: `${plugins.frontend.name}/alpha`,
        exports: reports(plugins.frontend, 'report-alpha.api.md'),
      },
      { specifier: plugins.common.name, exports: reports(plugins.common) },
    ]),
  );
}

async function main(): Promise<number> {
  const started = Date.now();
  const pg = postgresUrl();
  const dir = consumerFolder();
  const logFile = join(dir, 'consumer.log');
  say(`working in ${dir} (log: ${logFile})`);
  const local = { cwd: dir, logFile, env: consumerEnv() };
  const ours = Object.values(plugins);

  const tarballs: Record<string, string> = {};
  const packed = await check(
    'pack the three packages (npm run pack:plugins)',
    async () => {
      await run('npm', ['run', '-s', 'pack:plugins'], { cwd: ROOT, logFile });
      return ours.flatMap(({ name, version }) => {
        const tarball = join(ROOT, 'dist-packages', `${name}-${version}.tgz`);
        tarballs[name] = tarball;
        return existsSync(tarball) ? [] : [`no ${relative(ROOT, tarball)}`];
      });
    },
  );
  if (!packed) return 1;

  cpSync(FIXTURE, dir, { recursive: true });
  writeConsumerPackage(dir, tarballs);
  const installed = await check(
    'npm install the tarballs beside the Backstage 1.55 packages',
    async () => {
      await run(
        'npm',
        [
          'install',
          '--no-audit',
          '--no-fund',
          '--prefer-offline',
          '--ignore-scripts',
          // Peer conflicts are warnings, as for yarn in a Backstage app (@material-ui/core 4 asks for React 16 or 17).
          '--legacy-peer-deps',
          '--loglevel=error',
        ],
        local,
      );
    },
  );
  if (!installed) return 1;

  const tree = new InstalledTree(dir);
  const installedDir = (p: Plugin) => tree.packageDir(p.name);
  await check('each package resolves to its tarball, once', async () =>
    checkResolvedFromTarballs(tree, ours),
  );
  await check(
    'no Backstage package at a version only pvc-pruner brings',
    async () =>
      checkNoSecondCopies(
        tree,
        ours.map(p => p.name),
      ),
  );
  await check('the built code imports only declared packages', async () =>
    ours.flatMap(p => checkDeclaredImports(installedDir(p))),
  );
  await check('LICENSE and NOTICE in every package', async () =>
    ours.flatMap(p =>
      checkSameFiles(installedDir(p), ROOT, ['LICENSE', 'NOTICE']).map(
        problem => `${p.name}: ${problem}`,
      ),
    ),
  );
  await check('the backend ships its migrations, RBAC and spec', async () => [
    ...checkMigrations(installedDir(plugins.backend), plugins.backend.dir),
    ...checkSameFiles(installedDir(plugins.backend), plugins.backend.dir, [
      'rbac/pvc-pruner-rbac.yaml',
      'src/schema/openapi.yaml',
    ]),
  ]);
  await check('the backend ships its config schema', () =>
    checkConfigSchema(installedDir(plugins.backend)),
  );

  const esbuild = join(dir, 'node_modules/.bin/esbuild');
  const typeChecked = await check(
    'type-check the backend and the app against the installed types (every reported export)',
    async () => {
      await run(
        process.execPath,
        [join(dir, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'],
        local,
      );
    },
  );
  await check(
    'bundle the app (both frontend systems) with esbuild',
    async () => {
      await run(
        esbuild,
        [
          'app/newFrontendSystem.tsx',
          'app/legacyFrontendSystem.tsx',
          'generated/frontendExports.ts',
          '--bundle',
          '--format=esm',
          '--platform=browser',
          '--outdir=out/app',
          '--log-level=error',
          '--define:process.env.NODE_ENV="production"',
          ...['svg', 'png', 'jpg', 'woff', 'woff2', 'ttf', 'eot'].map(
            ext => `--loader:.${ext}=file`,
          ),
          // An app's bundler polyfills Node's modules (the catalog plugin's csv-stringify wants stream).
          ...builtinModules.map(name => `--external:${name}`),
          '--external:node:*',
        ],
        local,
      );
    },
  );
  if (typeChecked) {
    // To CommonJS, as backstage-cli builds a backend; imports stay imports.
    await run(
      esbuild,
      [
        'backend.ts',
        'generated/backendExports.ts',
        '--platform=node',
        '--format=cjs',
        '--outdir=out',
        '--log-level=error',
      ],
      local,
    );
    await check(
      'every reported backend and -common export is defined at run time',
      async () => {
        await run(process.execPath, ['out/generated/backendExports.js'], local);
      },
    );
    const sim = await startKubeSim({ https: true, scenario: 'demo' });
    let backend: ConsumerBackend | undefined;
    try {
      const running = await check(
        'start the backend (catalog, permissions, guest, kubernetes, pvc-pruner) with node',
        async () => {
          backend = await ConsumerBackend.start({ dir, sim, postgresUrl: pg });
        },
      );
      if (running && backend) {
        const pruner = new PluginChecks(
          backend.baseUrl,
          await backend.guestToken(),
          sim,
          installedDir(plugins.backend),
        );
        await check('GET /api/pvc-pruner/health', () => pruner.health());
        await check('the served OpenAPI spec is the shipped one', () =>
          pruner.spec(),
        );
        let scanned: Awaited<ReturnType<PluginChecks['scan']>> | undefined;
        await check('scan component:default/orders', async () => {
          scanned = await pruner.scan();
        });
        if (scanned) {
          const sts = scanned;
          await check('dry run of its orphans', () => pruner.dryRun(sts));
        }
      }
    } finally {
      await backend?.stop();
      await sim.close();
    }
  }

  const failed = results.filter(r => r.problems.length > 0);
  say(`done in ${Math.round((Date.now() - started) / 1000)} s`);
  if (failed.length === 0) {
    // About 1 GB of small files: rm goes on after this test, in the background.
    spawn('rm', ['-rf', dir], { detached: true, stdio: 'ignore' }).unref();
  } else
    say(`kept ${dir} for a look (backend log: ${join(dir, 'backend.log')})`);
  process.stdout.write(
    `${results.length - failed.length} passed, ${failed.length} failed\n`,
  );
  return failed.length === 0 ? 0 : 1;
}

main().then(
  code => process.exit(code),
  e => {
    say(`${e instanceof Error ? e.message : e}`);
    process.exit(2);
  },
);
