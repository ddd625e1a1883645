import { createBackend } from '@backstage/backend-defaults';

// A standalone backend with only the pvc-pruner plugin. Try:
//   curl http://localhost:7007/api/pvc-pruner/health
const backend = createBackend();

backend.add(import('../src'));

backend.start();
