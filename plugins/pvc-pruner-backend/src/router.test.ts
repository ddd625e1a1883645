import { mockErrorHandler } from '@backstage/backend-test-utils';
import express from 'express';
import request from 'supertest';
import { createRouter } from './router';

describe('createRouter', () => {
  let app: express.Express;

  beforeEach(async () => {
    app = express();
    app.use(await createRouter());
    app.use(mockErrorHandler());
  });

  it('answers GET /health with status ok', async () => {
    const response = await request(app).get('/health');

    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(response.body).toEqual({ status: 'ok' });
  });

  it('answers 404 for unknown routes', async () => {
    const response = await request(app).get('/todos');

    expect(response.status).toBe(404);
  });
});
