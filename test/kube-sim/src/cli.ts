import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { parse } from 'yaml';
import {
  KubeconfigCredential,
  KubeSimAuthOptions,
  startKubeSim,
} from './index';

const USAGE = `Usage: npm run sim -- --port N --kubeconfig PATH [--scenario demo|empty|FILE.yaml] [--https] [--time-factor F] [--token T]
  [--auth-config FILE.yaml]   startKubeSim's \`auth\` options (oidc issuers with JWKS keys, aws, google, azure, bindings)
  [--client-cert USER[:GROUP,...]]   write the kubeconfig with a client certificate for USER in GROUPs (needs --https)`;

/** `alice:team-a,qa` → user alice in groups team-a and qa. */
function parseClientCert(value: string) {
  const [user, groups] = value.split(':');
  if (!user) throw new Error(`--client-cert needs a user name\n${USAGE}`);
  return { user, groups: groups ? groups.split(',').filter(Boolean) : [] };
}

async function main() {
  const { values } = parseArgs({
    options: {
      port: { type: 'string', default: '0' },
      kubeconfig: { type: 'string' },
      scenario: { type: 'string', default: 'empty' },
      https: { type: 'boolean', default: false },
      'time-factor': { type: 'string', default: '1' },
      token: { type: 'string' },
      'auth-config': { type: 'string' },
      'client-cert': { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const port = Number(values.port);
  const timeFactor = Number(values['time-factor']);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`--port must be 0..65535\n${USAGE}`);
  if (!(timeFactor > 0))
    throw new Error(`--time-factor must be a positive number\n${USAGE}`);
  if (!values.kubeconfig)
    throw new Error(`--kubeconfig PATH is required\n${USAGE}`);
  if (values['client-cert'] && !values.https)
    throw new Error(`--client-cert needs --https\n${USAGE}`);
  const auth: KubeSimAuthOptions | undefined = values['auth-config']
    ? parse(readFileSync(values['auth-config'], 'utf8'))
    : undefined;

  const sim = await startKubeSim({
    port,
    https: values.https,
    scenario: values.scenario,
    timeFactor,
    token: values.token,
    auth,
  });
  let credential: KubeconfigCredential = sim.token;
  if (values['client-cert']) {
    const { cert, key } = sim.issueClientCertificate(
      parseClientCert(values['client-cert']),
    );
    credential = { clientCertificate: cert, clientKey: key };
  }
  sim.writeKubeconfig(values.kubeconfig, credential);
  process.stdout.write(
    `kube-sim ready at ${sim.url} (scenario ${values.scenario}); kubeconfig written to ${values.kubeconfig}\n`,
  );

  const shutdown = async (signal: string) => {
    await sim.close();
    process.stdout.write(`kube-sim stopped (${signal})\n`);
    process.exit(0);
  };
  process.once('SIGINT', () => void shutdown('SIGINT'));
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
}

main().catch(e => {
  process.stderr.write(`kube-sim: ${e.message}\n`);
  process.exit(1);
});
