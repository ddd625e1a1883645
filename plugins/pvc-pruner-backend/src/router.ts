import express from 'express';
import Router from 'express-promise-router';

/**
 * Creates the HTTP routes of the pvc-pruner backend plugin.
 *
 * Routes only: validation, credentials and the calls into services happen
 * here; the services do the work.
 */
export async function createRouter(): Promise<express.Router> {
  const router = Router();
  router.use(express.json());

  router.get('/health', (_req, res) => {
    res.json({ status: 'ok' });
  });

  return router;
}
