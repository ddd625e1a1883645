import { generateKeyPairSync } from 'node:crypto';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { exportJWK, SignJWT } from 'jose';
import { stringify } from 'yaml';
import {
  eventually,
  expectNoDiscoveryWarnings,
  freePort,
  makeTempDir,
  rawRequest,
  runKubectl,
  spawnProcess,
} from './helpers';

jest.setTimeout(30000);

const PACKAGE_DIR = join(__dirname, '..');

/** `npm run sim -- <args>` without npm: the same node command line. */
function startCli(args: string[]) {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.NODE_OPTIONS;
  return spawnProcess(
    process.execPath,
    [
      '--require',
      '@backstage/cli/config/nodeTransform.cjs',
      'src/cli.ts',
      ...args,
    ],
    env,
    PACKAGE_DIR,
  );
}

/** The demo scenario over https on this port, writing this kubeconfig. */
const demoArgs = (port: number, kubeconfig: string) => [
  '--port',
  String(port),
  '--kubeconfig',
  kubeconfig,
  '--scenario',
  'demo',
  '--https',
];

describe('the kube-sim CLI', () => {
  it('starts with --https and the demo scenario, serves kubectl, and exits 0 on SIGTERM', async () => {
    const dir = makeTempDir('kube-sim-cli-');
    const kubeconfig = join(dir, 'kubeconfig');
    const port = await freePort();
    const cli = startCli(demoArgs(port, kubeconfig));
    try {
      await eventually(
        () => cli.stdout().includes('\n') || cli.child.exitCode !== null,
        { timeoutMs: 20000, message: 'ready line' },
      );
      expect(cli.child.exitCode).toBeNull();
      expect(cli.stdout()).toBe(
        `kube-sim ready at https://127.0.0.1:${port} (scenario demo); kubeconfig written to ${kubeconfig}\n`,
      );

      const written = readFileSync(kubeconfig, 'utf8');
      expect(written).toContain(`server: https://127.0.0.1:${port}`);
      expect(written).toContain('certificate-authority-data:');

      const result = await runKubectl(['get', 'sts', '-A'], {
        kubeconfig,
        home: join(dir, 'home'),
        cacheDir: join(dir, 'cache'),
      });
      expect(result.code).toBe(0);
      expectNoDiscoveryWarnings(result.stderr);
      const lines = result.stdout.trim().split('\n');
      expect(lines[0].split(/\s{2,}/)).toEqual([
        'NAMESPACE',
        'NAME',
        'READY',
        'AGE',
      ]);
      expect(lines.slice(1).map(l => l.split(/\s+/).slice(0, 2))).toEqual([
        ['payments', 'ledger-db'],
        ['search', 'nightly-reports'],
        ['search', 'search-index'],
        ['shop', 'cart-analytics'],
        ['shop', 'cart-cache'],
        ['shop', 'cart-sessions'],
        ['shop', 'orders-db'],
      ]);

      cli.kill('SIGTERM');
      const exit = await cli.exited;
      expect(exit).toEqual({ code: 0, signal: null });
      expect(cli.stdout().trim().split('\n').pop()).toBe(
        'kube-sim stopped (SIGTERM)',
      );
      expect(cli.stderr()).not.toMatch(/error|kube-sim:/i);
    } finally {
      cli.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('fails clearly on a scenario file that does not exist, and on a missing --kubeconfig', async () => {
    const dir = makeTempDir('kube-sim-cli-');
    const kubeconfig = join(dir, 'kubeconfig');
    const badScenario = startCli([
      '--port',
      '0',
      '--kubeconfig',
      kubeconfig,
      '--scenario',
      '/bad/path',
    ]);
    const noKubeconfig = startCli(['--port', '0']);
    const [bad, missing] = await Promise.all([
      badScenario.exited,
      noKubeconfig.exited,
    ]);

    expect(bad.code).not.toBe(0);
    expect(bad.code).not.toBeNull();
    expect(badScenario.stdout()).toBe('');
    expect(badScenario.stderr().trim()).toMatch(/^kube-sim: .*\/bad\/path/);
    expect(badScenario.stderr()).toMatch(/ENOENT|no such file/);
    expect(existsSync(kubeconfig)).toBe(false);

    expect(missing.code).not.toBe(0);
    expect(noKubeconfig.stderr()).toContain('--kubeconfig PATH is required');
    expect(noKubeconfig.stderr()).toContain('Usage: npm run sim --');
    rmSync(dir, { recursive: true, force: true });
  });

  it('--auth-config turns on OIDC and RBAC bindings, and --client-cert writes a client-certificate kubeconfig', async () => {
    const dir = makeTempDir('kube-sim-cli-');
    const kubeconfig = join(dir, 'kubeconfig');
    const idp = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const authConfig = join(dir, 'auth.yaml');
    writeFileSync(
      authConfig,
      stringify({
        oidc: [
          {
            issuer: 'https://idp.example.com',
            audiences: ['demo'],
            keys: { keys: [await exportJWK(idp.publicKey)] },
            usernameClaim: 'email',
          },
        ],
        bindings: [
          {
            subjects: [
              { kind: 'Group', name: 'team-a' },
              { kind: 'User', name: 'ada@example.com' },
            ],
            rules: [
              {
                apiGroups: ['apps'],
                resources: ['statefulsets'],
                verbs: ['list'],
              },
            ],
          },
        ],
      }),
    );
    const port = await freePort();
    const cli = startCli([
      ...demoArgs(port, kubeconfig),
      '--auth-config',
      authConfig,
      '--client-cert',
      'alice:team-a,qa',
    ]);
    try {
      await eventually(
        () => cli.stdout().includes('\n') || cli.child.exitCode !== null,
        { timeoutMs: 20000, message: 'ready line' },
      );
      expect(cli.child.exitCode).toBeNull();
      const written = readFileSync(kubeconfig, 'utf8');
      expect(written).toContain('client-certificate-data:');
      expect(written).not.toContain('token:');

      const kubectl = (args: string[]) =>
        runKubectl(args, {
          kubeconfig,
          home: join(dir, 'home'),
          cacheDir: join(dir, 'cache'),
        });
      const list = await kubectl(['get', 'sts', '-A', '-o', 'name']);
      expect(list.code).toBe(0);
      expect(list.stdout).toContain('statefulset.apps/orders-db');
      const pvcs = await kubectl(['get', 'pvc', '-n', 'shop']);
      expect(pvcs.code).toBe(1);
      expect(pvcs.stderr).toContain(
        'User "alice" cannot list resource "persistentvolumeclaims" in API group "" in the namespace "shop"',
      );

      const caCert = Buffer.from(
        written.match(/certificate-authority-data: (\S+)/)![1],
        'base64',
      ).toString();
      const token = await new SignJWT({ email: 'ada@example.com' })
        .setProtectedHeader({ alg: 'RS256' })
        .setIssuer('https://idp.example.com')
        .setAudience('demo')
        .setExpirationTime('5m')
        .sign(idp.privateKey);
      const sim = { url: `https://127.0.0.1:${port}`, token, caCert };
      const sts = await rawRequest(sim, 'GET', '/apis/apps/v1/statefulsets');
      expect(sts.status).toBe(200);
      expect(
        (await rawRequest(sim, 'GET', '/api/v1/persistentvolumeclaims')).status,
      ).toBe(403);
      expect(
        (
          await rawRequest(
            { ...sim, token: `${token}x` },
            'GET',
            '/apis/apps/v1/statefulsets',
          )
        ).status,
      ).toBe(401);
    } finally {
      cli.kill('SIGKILL');
      await cli.exited;
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
