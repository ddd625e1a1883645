import {
  mockCredentials,
  startTestBackend,
} from '@backstage/backend-test-utils';
import request from 'supertest';
import { pvcPrunerPlugin } from './plugin';

describe('pvcPrunerPlugin', () => {
  it('serves /api/pvc-pruner/health', async () => {
    const { server } = await startTestBackend({
      features: [pvcPrunerPlugin],
    });

    await request(server)
      .get('/api/pvc-pruner/health')
      .expect(200, { status: 'ok' });
  });

  it('serves /health without credentials', async () => {
    const { server } = await startTestBackend({
      features: [pvcPrunerPlugin],
    });

    const response = await request(server)
      .get('/api/pvc-pruner/health')
      .set('Authorization', mockCredentials.none.header());

    expect(response.status).toBe(200);
    expect(response.body).toEqual({ status: 'ok' });
  });

  it('does not serve the template routes', async () => {
    const { server } = await startTestBackend({
      features: [pvcPrunerPlugin],
    });

    const response = await request(server).get('/api/pvc-pruner/todos');

    expect(response.status).toBe(404);
  });
});
