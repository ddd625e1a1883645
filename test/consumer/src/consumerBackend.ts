import { ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { knex } from 'knex';
import { KubeSim } from 'kube-sim';
import { stringify } from 'yaml';

const START_TIMEOUT_MS = 90_000;

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise(resolve => server.close(resolve));
  return port;
}

/** The consumer's backend (fixture/backend.ts, built to out/), started with plain node against a simulator. */
export class ConsumerBackend {
  private constructor(
    readonly baseUrl: string,
    private readonly child: ChildProcess,
    private readonly postgresUrl: string,
    private readonly databasePrefix: string,
    private exited: { code: number | null } | undefined,
    readonly logFile: string,
  ) {}

  static async start(options: {
    dir: string;
    sim: KubeSim;
    postgresUrl: string;
  }): Promise<ConsumerBackend> {
    const { dir, sim, postgresUrl } = options;
    const port = await freePort();
    const baseUrl = `http://127.0.0.1:${port}`;
    const databasePrefix = `pvc_pruner_consumer_${process.pid}_${Date.now()}_`;
    const config = {
      app: { baseUrl: 'http://127.0.0.1:3000' },
      backend: {
        baseUrl,
        listen: { port, host: '127.0.0.1' },
        database: {
          client: 'pg',
          connection: postgresUrl,
          prefix: databasePrefix,
        },
      },
      auth: {
        providers: {
          guest: {
            userEntityRef: 'user:default/guest',
            dangerouslyAllowOutsideDevelopment: true,
          },
        },
      },
      catalog: {
        rules: [{ allow: ['Component', 'Group', 'User', 'Location'] }],
        locations: [{ type: 'file', target: join(dir, 'catalog-info.yaml') }],
      },
      permission: { enabled: true },
      // The Kubernetes plugin's own config, which pvc-pruner reads.
      kubernetes: {
        serviceLocatorMethod: { type: 'multiTenant' },
        clusterLocatorMethods: [
          {
            type: 'config',
            clusters: [
              {
                name: 'sim',
                url: sim.url,
                authProvider: 'serviceAccount',
                serviceAccountToken: sim.token,
                caData: Buffer.from(sim.caCert!).toString('base64'),
              },
            ],
          },
        ],
      },
    };
    writeFileSync(join(dir, 'app-config.yaml'), stringify(config));
    const logFile = join(dir, 'backend.log');
    const log = createWriteStream(logFile);
    const child = spawn(
      process.execPath,
      ['out/backend.js', '--config', join(dir, 'app-config.yaml')],
      {
        cwd: dir,
        env: { ...process.env, NODE_ENV: 'production' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    child.stdout!.pipe(log);
    child.stderr!.pipe(log);
    const backend = new ConsumerBackend(
      baseUrl,
      child,
      postgresUrl,
      databasePrefix,
      undefined,
      logFile,
    );
    child.on('exit', code => {
      backend.exited = { code };
    });
    await backend.waitUntilReady();
    return backend;
  }

  private async waitUntilReady() {
    const deadline = Date.now() + START_TIMEOUT_MS;
    for (;;) {
      if (this.exited)
        throw new Error(
          `the backend exited (code ${
            this.exited.code
          }) before it was ready:\n${this.tail()}`,
        );
      const ready = await fetch(
        `${this.baseUrl}/.backstage/health/v1/readiness`,
      )
        .then(r => r.ok)
        .catch(() => false);
      if (ready) return;
      if (Date.now() > deadline)
        throw new Error(
          `the backend was not ready after ${
            START_TIMEOUT_MS / 1000
          } s:\n${this.tail()}`,
        );
      await new Promise(resolve => setTimeout(resolve, 500));
    }
  }

  /** The last lines the backend logged. */
  tail(lines = 30): string {
    return readFileSync(this.logFile, 'utf8')
      .trimEnd()
      .split('\n')
      .slice(-lines)
      .join('\n');
  }

  /** A guest's Backstage token, as the app's sign-in page gets it. */
  async guestToken(): Promise<string> {
    const res = await fetch(`${this.baseUrl}/api/auth/guest/refresh`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
    });
    if (!res.ok)
      throw new Error(
        `guest sign-in answered ${res.status}: ${await res.text()}`,
      );
    return (await res.json()).backstageIdentity.token;
  }

  async stop() {
    if (!this.exited) {
      const exited = new Promise(resolve => this.child.once('exit', resolve));
      this.child.kill('SIGTERM');
      const timer = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
    const db = knex({ client: 'pg', connection: this.postgresUrl });
    try {
      const { rows } = await db.raw(
        'SELECT datname FROM pg_database WHERE starts_with(datname, ?)',
        [this.databasePrefix],
      );
      for (const { datname } of rows)
        await db.raw('DROP DATABASE IF EXISTS ?? WITH (FORCE)', [datname]);
    } finally {
      await db.destroy();
    }
  }
}
