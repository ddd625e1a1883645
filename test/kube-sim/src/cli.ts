import { parseArgs } from 'node:util';
import { startKubeSim } from './index';

const USAGE = `Usage: npm run sim -- --port N --kubeconfig PATH [--scenario demo|empty|FILE.yaml] [--https] [--time-factor F] [--token T]`;

async function main() {
  const { values } = parseArgs({
    options: {
      port: { type: 'string', default: '0' },
      kubeconfig: { type: 'string' },
      scenario: { type: 'string', default: 'empty' },
      https: { type: 'boolean', default: false },
      'time-factor': { type: 'string', default: '1' },
      token: { type: 'string' },
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

  const sim = await startKubeSim({
    port,
    https: values.https,
    scenario: values.scenario,
    timeFactor,
    token: values.token,
  });
  sim.writeKubeconfig(values.kubeconfig);
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
