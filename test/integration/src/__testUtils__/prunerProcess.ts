/*
 * The plugin in a backend process of its own, as `startPrunerProcess` starts
 * it: the options come as JSON in PVC_PRUNER_TEST_OPTIONS, and the process
 * tells its parent the plugin's URL once it serves.
 */
import { mockServices } from '@backstage/backend-test-utils';
import { PrunerOptions, startPruner } from './harness';

const options: PrunerOptions = JSON.parse(process.env.PVC_PRUNER_TEST_OPTIONS!);

startPruner({
  ...options,
  features: [mockServices.rootLogger.factory({ level: 'debug' })],
}).then(
  pruner => {
    process.send!({ baseUrl: pruner.baseUrl });
    process.once('SIGTERM', () => pruner.stop().then(() => process.exit(0)));
  },
  error => {
    process.stderr.write(`${error.stack}\n`);
    process.exit(1);
  },
);
