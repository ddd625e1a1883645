import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { ResponseError } from '@backstage/errors';
import { mockApis, registerMswTestHooks } from '@backstage/test-utils';
import { PruneEvent } from 'backstage-plugin-pvc-pruner-common';
import { PvcPrunerClient } from './PvcPrunerClient';
import { describeError, isTooManyRequests } from '../utils/errors';
import { eventFactory, makeJob, makeResponse } from '../__testUtils__/fixtures';

const base = 'http://backstage.test/api/pvc-pruner';
const server = setupServer();

const frame = (event: PruneEvent) =>
  `id: ${event.seq}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
const sse = (body: string) =>
  new HttpResponse(body, { headers: { 'Content-Type': 'text/event-stream' } });
const errorBody = (status: number, name: string, message: string) =>
  HttpResponse.json(
    {
      error: { name, message },
      request: { method: 'GET', url: '/' },
      response: { statusCode: status },
    },
    { status },
  );

/** Clusters as `GET /v1/clusters` lists them: one server-side, three of client-side providers. */
const TOKEN_CLUSTERS = [
  { name: 'prod', authProvider: 'serviceAccount' },
  { name: 'corp', authProvider: 'oidc', userTokenKey: 'oidc.okta' },
  { name: 'gke', authProvider: 'google', userTokenKey: 'google' },
  { name: 'gke-2', authProvider: 'google', userTokenKey: 'google' },
];

/** The `Backstage-Kubernetes-Authorization-*` headers of a request. */
const tokenHeaders = (request: Request) =>
  Object.fromEntries(
    [...request.headers.entries()].filter(([k]) =>
      k.startsWith('backstage-kubernetes-authorization'),
    ),
  );

/** A client whose kubernetesAuthProvidersApi gives `<key>-user-token` for every key it is asked. */
function clientWithUserTokens() {
  const getCredentials = jest.fn(async (key: string) => ({
    token: `${key}-user-token`,
  }));
  const client = new PvcPrunerClient({
    discoveryApi: mockApis.discovery({ baseUrl: 'http://backstage.test' }),
    fetchApi: { fetch },
    kubernetesAuthProvidersApi: {
      getCredentials,
      decorateRequestBodyForAuth: jest.fn(),
    },
  });
  return { client, getCredentials };
}

function makeClient() {
  const client = new PvcPrunerClient({
    discoveryApi: mockApis.discovery({ baseUrl: 'http://backstage.test' }),
    fetchApi: {
      fetch: (input, init) => {
        const headers = new Headers(init?.headers);
        headers.set('Authorization', 'Bearer user-token');
        return fetch(input, { ...init, headers });
      },
    },
    reconnectDelayMs: 1,
  });
  return { client };
}

describe('PvcPrunerClient', () => {
  registerMswTestHooks(server);

  it('reads the fleet with its filters and page, leaving out what is not set', async () => {
    const urls: string[] = [];
    server.use(
      http.get(`${base}/v1/fleet`, ({ request }) => {
        urls.push(request.url.slice(base.length));
        return HttpResponse.json({ items: [] });
      }),
    );
    const { client } = makeClient();
    await client.getFleet();
    await client.getFleet({
      cluster: 'prod',
      namespace: '',
      owner: 'group:default/checkout',
      limit: 500,
      cursor: 'abc',
    });
    expect(urls).toEqual([
      '/v1/fleet',
      '/v1/fleet?cluster=prod&owner=group%3Adefault%2Fcheckout&limit=500&cursor=abc',
    ]);
  });

  it('reads orphans with the user token', async () => {
    let seen: { entityRef: string | null; auth: string | null } | undefined;
    server.use(
      http.get(`${base}/v1/orphans`, ({ request }) => {
        seen = {
          entityRef: new URL(request.url).searchParams.get('entityRef'),
          auth: request.headers.get('authorization'),
        };
        return HttpResponse.json(makeResponse([]));
      }),
    );
    const { client } = makeClient();
    await expect(
      client.getOrphans('component:default/shop'),
    ).resolves.toMatchObject({ clusters: [] });
    expect(seen).toEqual({
      entityRef: 'component:default/shop',
      auth: 'Bearer user-token',
    });
  });

  it('sends the user tokens of client-side clusters as the Kubernetes proxy client does, and only the prune cluster’s with a prune or a fleet filtered by cluster', async () => {
    const seen: Array<Record<string, string>> = [];
    server.use(
      http.get(`${base}/v1/clusters`, () =>
        HttpResponse.json({ items: TOKEN_CLUSTERS }),
      ),
      http.get(`${base}/v1/orphans`, ({ request }) => {
        seen.push(tokenHeaders(request));
        return HttpResponse.json(makeResponse([]));
      }),
      http.post(`${base}/v1/prune-jobs`, ({ request }) => {
        seen.push(tokenHeaders(request));
        return HttpResponse.json({ id: 'job-1' }, { status: 202 });
      }),
      http.get(`${base}/v1/fleet`, ({ request }) => {
        seen.push(tokenHeaders(request));
        return HttpResponse.json({ items: [] });
      }),
    );
    const { client, getCredentials } = clientWithUserTokens();

    await client.getOrphans('component:default/shop');
    await client.startPrune({
      entityRef: 'component:default/shop',
      cluster: 'corp',
      namespace: 'shop',
      statefulSet: 'db',
      pvcs: [{ name: 'a', uid: '1' }],
    });
    // The fleet page reads client-side clusters with the user's token, as the card does.
    await client.getFleet();
    await client.getFleet({ cluster: 'gke' });
    await client.getFleet({ cluster: 'prod' });

    expect(seen).toEqual([
      {
        'backstage-kubernetes-authorization-oidc-okta': 'oidc.okta-user-token',
        'backstage-kubernetes-authorization-google': 'google-user-token',
      },
      {
        'backstage-kubernetes-authorization-oidc-okta': 'oidc.okta-user-token',
      },
      {
        'backstage-kubernetes-authorization-oidc-okta': 'oidc.okta-user-token',
        'backstage-kubernetes-authorization-google': 'google-user-token',
      },
      { 'backstage-kubernetes-authorization-google': 'google-user-token' },
      {},
    ]);
    expect(getCredentials.mock.calls.map(c => c[0])).toEqual([
      'oidc.okta',
      'google',
      'oidc.okta',
      'oidc.okta',
      'google',
      'google',
    ]);
  });

  it('restores and keeps snapshots with a JSON POST carrying the user’s token for the snapshot’s cluster only', async () => {
    const seen: Array<{
      path: string;
      body: unknown;
      tokens: Record<string, string>;
    }> = [];
    const target = {
      entityRef: 'component:default/shop',
      cluster: 'corp',
      namespace: 'shop',
      statefulSet: 'db',
      snapshot: { name: 'data-db-2-0a1b2c3d', uid: 'snap-1' },
    };
    server.use(
      http.get(`${base}/v1/clusters`, () =>
        HttpResponse.json({ items: TOKEN_CLUSTERS }),
      ),
      http.post(`${base}/v1/restores`, async ({ request }) => {
        seen.push({
          path: '/v1/restores',
          body: await request.json(),
          tokens: tokenHeaders(request),
        });
        return HttpResponse.json(
          { claim: { name: 'data-db-2' }, message: 'scale db to 3 replicas' },
          { status: 201 },
        );
      }),
      http.post(`${base}/v1/snapshots/keep`, async ({ request }) => {
        seen.push({
          path: '/v1/snapshots/keep',
          body: await request.json(),
          tokens: tokenHeaders(request),
        });
        return HttpResponse.json(
          {
            error: { name: 'InputError', message: 'at most 90 days' },
            response: { statusCode: 400 },
          },
          { status: 400 },
        );
      }),
    );
    const { client } = clientWithUserTokens();
    await expect(client.restoreSnapshot(target)).resolves.toMatchObject({
      message: 'scale db to 3 replicas',
    });
    const keepError = await client
      .keepSnapshot({ snapshot: target, keepUntil: '2027-06-01T00:00:00.000Z' })
      .catch(e => e);
    expect(describeError(keepError)).toBe('at most 90 days');
    expect(seen).toEqual([
      {
        path: '/v1/restores',
        body: target,
        tokens: {
          'backstage-kubernetes-authorization-oidc-okta':
            'oidc.okta-user-token',
        },
      },
      {
        path: '/v1/snapshots/keep',
        body: { snapshot: target, keepUntil: '2027-06-01T00:00:00.000Z' },
        tokens: {
          'backstage-kubernetes-authorization-oidc-okta':
            'oidc.okta-user-token',
        },
      },
    ]);
  });

  it('keeps a claim with a JSON POST and stops keeping it with a DELETE, each carrying the user’s token for the claim’s cluster only', async () => {
    const seen: Array<{
      method: string;
      path: string;
      body?: unknown;
      tokens: Record<string, string>;
    }> = [];
    const keep = {
      entityRef: 'component:default/shop',
      cluster: 'corp',
      namespace: 'shop',
      statefulSet: 'db',
      claim: { name: 'data-db-2', uid: 'uid/2' },
      reason: 'holds the March export',
      until: '2027-01-31T23:59:59.000Z',
    };
    server.use(
      http.get(`${base}/v1/clusters`, () =>
        HttpResponse.json({ items: TOKEN_CLUSTERS }),
      ),
      http.post(`${base}/v1/claim-keeps`, async ({ request }) => {
        const body = (await request.json()) as typeof keep;
        seen.push({
          method: 'POST',
          path: '/v1/claim-keeps',
          body,
          tokens: tokenHeaders(request),
        });
        return HttpResponse.json(
          {
            source: 'card',
            reason: body.reason,
            until: body.until,
            keptBy: 'user:default/ann',
            keptAt: '2026-12-03T10:00:00.000Z',
          },
          { status: 201 },
        );
      }),
      http.delete(`${base}/v1/claim-keeps/:uid`, ({ request, params }) => {
        seen.push({
          method: 'DELETE',
          path: `${request.url.slice(base.length)} (uid ${params.uid})`,
          tokens: tokenHeaders(request),
        });
        return new HttpResponse(null, { status: 204 });
      }),
    );
    const { client } = clientWithUserTokens();
    await expect(client.keepClaim(keep)).resolves.toEqual({
      source: 'card',
      reason: 'holds the March export',
      until: '2027-01-31T23:59:59.000Z',
      keptBy: 'user:default/ann',
      keptAt: '2026-12-03T10:00:00.000Z',
    });
    await expect(
      client.unkeepClaim({
        uid: 'uid/2',
        entityRef: 'component:default/shop',
        cluster: 'corp',
      }),
    ).resolves.toBeUndefined();
    const corpToken = {
      'backstage-kubernetes-authorization-oidc-okta': 'oidc.okta-user-token',
    };
    expect(seen).toEqual([
      {
        method: 'POST',
        path: '/v1/claim-keeps',
        body: keep,
        tokens: corpToken,
      },
      {
        method: 'DELETE',
        path: '/v1/claim-keeps/uid%2F2?entityRef=component%3Adefault%2Fshop&cluster=corp (uid uid/2)',
        tokens: corpToken,
      },
    ]);
  });

  it('keeps the backend message when a keep or an unkeep is refused', async () => {
    server.use(
      http.post(`${base}/v1/claim-keeps`, () =>
        errorBody(
          409,
          'ConflictError',
          'data-db-2 is being deleted by an automatic prune',
        ),
      ),
      http.delete(`${base}/v1/claim-keeps/:uid`, () =>
        errorBody(403, 'NotAllowedError', 'not allowed to prune'),
      ),
    );
    const { client } = makeClient();
    const keepError = await client
      .keepClaim({
        entityRef: 'component:default/shop',
        cluster: 'prod',
        namespace: 'shop',
        statefulSet: 'db',
        claim: { name: 'data-db-2', uid: '2' },
        reason: 'still needed',
      })
      .catch(e => e);
    expect(keepError).toBeInstanceOf(ResponseError);
    expect(keepError.statusCode).toBe(409);
    expect(describeError(keepError)).toBe(
      'data-db-2 is being deleted by an automatic prune',
    );
    const unkeepError = await client
      .unkeepClaim({
        uid: '2',
        entityRef: 'component:default/shop',
        cluster: 'prod',
      })
      .catch(e => e);
    expect(unkeepError.statusCode).toBe(403);
    expect(describeError(unkeepError)).toBe('not allowed to prune');
  });

  it('asks for, and sends, only the token of the cluster an entity names; none for a cluster it does not know', async () => {
    const seen: Array<Record<string, string>> = [];
    server.use(
      http.get(`${base}/v1/clusters`, () =>
        HttpResponse.json({ items: TOKEN_CLUSTERS }),
      ),
      http.get(`${base}/v1/orphans`, ({ request }) => {
        seen.push(tokenHeaders(request));
        return HttpResponse.json(makeResponse([]));
      }),
    );
    const { client, getCredentials } = clientWithUserTokens();

    await client.getOrphans('component:default/corp-app', { cluster: 'corp' });
    await client.getOrphans('component:default/prod-app', { cluster: 'prod' });
    await client.getOrphans('component:default/lost', { cluster: 'nowhere' });

    expect(seen).toEqual([
      {
        'backstage-kubernetes-authorization-oidc-okta': 'oidc.okta-user-token',
      },
      {},
      {},
    ]);
    expect(getCredentials.mock.calls.map(c => c[0])).toEqual(['oidc.okta']);
  });

  it('still scans when the user cannot get a token for a provider: that cluster’s section says so', async () => {
    let headers: string[] = [];
    server.use(
      http.get(`${base}/v1/clusters`, () =>
        HttpResponse.json({
          items: [{ name: 'aks', authProvider: 'aks', userTokenKey: 'aks' }],
        }),
      ),
      http.get(`${base}/v1/orphans`, ({ request }) => {
        headers = [...request.headers.keys()];
        return HttpResponse.json(makeResponse([]));
      }),
    );
    const client = new PvcPrunerClient({
      discoveryApi: mockApis.discovery({ baseUrl: 'http://backstage.test' }),
      fetchApi: { fetch },
      kubernetesAuthProvidersApi: {
        getCredentials: async () => {
          throw new Error('sign-in was rejected');
        },
        decorateRequestBodyForAuth: jest.fn(),
      },
    });

    await expect(
      client.getOrphans('component:default/shop'),
    ).resolves.toMatchObject({ clusters: [] });
    expect(headers.filter(h => h.startsWith('backstage-kubernetes'))).toEqual(
      [],
    );
  });

  it('lists Released volumes of an entity or of the fleet, and starts a reclaim with the token of its cluster only', async () => {
    const seen: Array<{ query: string; tokens: Record<string, string> }> = [];
    const posted: unknown[] = [];
    server.use(
      http.get(`${base}/v1/clusters`, () =>
        HttpResponse.json({ items: TOKEN_CLUSTERS }),
      ),
      http.get(`${base}/v1/released-volumes`, ({ request }) => {
        seen.push({
          query: new URL(request.url).search,
          tokens: tokenHeaders(request),
        });
        return HttpResponse.json({
          items: [],
          truncated: false,
          totals: { volumes: 0, bytes: 0 },
          errors: [],
        });
      }),
      http.post(`${base}/v1/reclaim-jobs`, async ({ request }) => {
        posted.push({
          body: await request.json(),
          tokens: tokenHeaders(request),
        });
        return HttpResponse.json({ id: 'job-9' }, { status: 202 });
      }),
    );
    const { client } = clientWithUserTokens();

    await client.listReleasedVolumes('component:default/shop');
    await client.listReleasedVolumes();
    const request = {
      cluster: 'gke',
      namespace: 'shop',
      volumes: [
        { name: 'pvc-1', uid: 'u', resourceVersion: '7', claimUid: 'c' },
      ],
    };
    await expect(client.startReclaim(request)).resolves.toEqual({
      id: 'job-9',
    });

    expect(seen.map(s => s.query)).toEqual([
      '?entityRef=component%3Adefault%2Fshop',
      '',
    ]);
    expect(posted).toEqual([
      {
        body: request,
        tokens: {
          'backstage-kubernetes-authorization-google': 'google-user-token',
        },
      },
    ]);
  });

  it('maps errors to ResponseError, keeping the backend message', async () => {
    server.use(
      http.get(`${base}/v1/orphans`, () =>
        errorBody(403, 'NotAllowedError', 'not allowed to read'),
      ),
      http.post(`${base}/v1/prune-jobs`, () =>
        errorBody(
          409,
          'ConflictError',
          'StatefulSet shop/db is being pruned by user:default/ann',
        ),
      ),
    );
    const { client } = makeClient();
    const readError = await client
      .getOrphans('component:default/shop')
      .catch(e => e);
    expect(readError).toBeInstanceOf(ResponseError);
    expect(readError.statusCode).toBe(403);
    const pruneError = await client
      .startPrune({
        entityRef: 'component:default/shop',
        cluster: 'prod',
        namespace: 'shop',
        statefulSet: 'db',
        pvcs: [{ name: 'a', uid: '1' }],
      })
      .catch(e => e);
    expect(pruneError.statusCode).toBe(409);
    expect(describeError(pruneError)).toBe(
      'StatefulSet shop/db is being pruned by user:default/ann',
    );
  });

  it('keeps the backend message of a 429 (too many at once), and recognises it', async () => {
    const message =
      'You have 10 prune jobs running, dry runs included (the limit is 10); wait for one to finish';
    server.use(
      http.post(`${base}/v1/prune-jobs`, () =>
        errorBody(429, 'TooManyRequestsError', message),
      ),
    );
    const { client } = makeClient();
    const error = await client
      .startPrune({
        entityRef: 'component:default/shop',
        cluster: 'prod',
        namespace: 'shop',
        statefulSet: 'db',
        pvcs: [{ name: 'a', uid: '1' }],
      })
      .catch(e => e);
    expect(error.statusCode).toBe(429);
    expect(isTooManyRequests(error)).toBe(true);
    expect(describeError(error)).toBe(message);
  });

  it('posts a prune and lists jobs with paging parameters', async () => {
    let body: unknown;
    let query = '';
    server.use(
      http.post(`${base}/v1/prune-jobs`, async ({ request }) => {
        body = await request.json();
        return HttpResponse.json({ id: 'job-1' }, { status: 202 });
      }),
      http.get(`${base}/v1/prune-jobs`, ({ request }) => {
        query = new URL(request.url).search;
        return HttpResponse.json({ items: [makeJob()], nextCursor: 'older' });
      }),
      http.get(`${base}/v1/prune-jobs/job-1`, () =>
        HttpResponse.json(makeJob()),
      ),
    );
    const { client } = makeClient();
    const request = {
      entityRef: 'component:default/shop',
      cluster: 'prod',
      namespace: 'shop',
      statefulSet: 'db',
      pvcs: [{ name: 'a', uid: '1' }],
      dryRun: true,
    };
    await expect(client.startPrune(request)).resolves.toEqual({ id: 'job-1' });
    expect(body).toEqual(request);
    await expect(
      client.listJobs({
        entityRef: 'component:default/shop',
        limit: 5,
        cursor: 'c1',
      }),
    ).resolves.toMatchObject({ nextCursor: 'older' });
    expect(query).toBe(
      '?entityRef=component%3Adefault%2Fshop&limit=5&cursor=c1',
    );
    await expect(client.getJob('job-1')).resolves.toMatchObject({
      id: 'job-1',
    });
  });

  it('reads an unowned StatefulSet with the user token of that one cluster, and prunes it without an entity', async () => {
    const seen: Array<{ url: string; tokens: string[] }> = [];
    let body: Record<string, unknown> | undefined;
    const tokensOf = (request: Request) =>
      [...request.headers.keys()].filter(k =>
        k.startsWith('backstage-kubernetes-authorization'),
      );
    server.use(
      http.get(`${base}/v1/clusters`, () =>
        HttpResponse.json({
          items: [
            { name: 'corp', authProvider: 'oidc', userTokenKey: 'oidc.okta' },
            { name: 'gke', authProvider: 'google', userTokenKey: 'google' },
          ],
        }),
      ),
      http.get(`${base}/v1/unowned/orphans`, ({ request }) => {
        seen.push({
          url: request.url.slice(base.length),
          tokens: tokensOf(request),
        });
        return HttpResponse.json({
          cluster: 'gke',
          statefulSet: { name: 'nightly-reports' },
        });
      }),
      http.post(`${base}/v1/prune-jobs`, async ({ request }) => {
        body = (await request.json()) as Record<string, unknown>;
        seen.push({ url: '/v1/prune-jobs', tokens: tokensOf(request) });
        return HttpResponse.json({ id: 'job-1' }, { status: 202 });
      }),
    );
    const client = new PvcPrunerClient({
      discoveryApi: mockApis.discovery({ baseUrl: 'http://backstage.test' }),
      fetchApi: { fetch },
      kubernetesAuthProvidersApi: {
        getCredentials: async key => ({ token: `${key}-user-token` }),
        decorateRequestBodyForAuth: jest.fn(),
      },
    });

    await expect(
      client.getUnownedOrphans({
        cluster: 'gke',
        namespace: 'search',
        statefulSet: 'nightly-reports',
      }),
    ).resolves.toMatchObject({ cluster: 'gke' });
    await client.startPrune({
      cluster: 'gke',
      namespace: 'search',
      statefulSet: 'nightly-reports',
      pvcs: [{ name: 'scratch-nightly-reports-1', uid: 'u1' }],
      dryRun: true,
    });

    expect(seen).toEqual([
      {
        url: '/v1/unowned/orphans?cluster=gke&namespace=search&statefulSet=nightly-reports',
        tokens: ['backstage-kubernetes-authorization-google'],
      },
      {
        url: '/v1/prune-jobs',
        tokens: ['backstage-kubernetes-authorization-google'],
      },
    ]);
    expect(body).not.toHaveProperty('entityRef');
    expect(body).toMatchObject({
      statefulSet: 'nightly-reports',
      dryRun: true,
    });
  });

  it('parses the event stream over fetch and stops after job-finished', async () => {
    const event = eventFactory();
    const events = [
      event('job-queued'),
      event('job-started'),
      event('pvc-deleted', { pvc: 'a' }),
      event('job-finished', { status: 'succeeded' }),
    ];
    let request:
      | { after: string | null; auth: string | null; accept: string | null }
      | undefined;
    server.use(
      http.get(`${base}/v1/prune-jobs/job-1/events`, ({ request: r }) => {
        request = {
          after: new URL(r.url).searchParams.get('after'),
          auth: r.headers.get('authorization'),
          accept: r.headers.get('accept'),
        };
        return sse(
          `: stream of pvc-pruner job events\n\n${frame(
            events[0],
          )}: keep-alive\n\nevent: error\ndata: {"message":"db hiccup"}\n\n${events
            .slice(1)
            .map(frame)
            .join('')}`,
        );
      }),
    );
    const { client } = makeClient();
    const received: PruneEvent[] = [];
    await client.streamJobEvents('job-1', 0, e => received.push(e));
    expect(received).toEqual(events);
    expect(request).toEqual({
      after: '0',
      auth: 'Bearer user-token',
      accept: 'text/event-stream',
    });
  });

  it('reconnects after a dropped stream from the last event it saw', async () => {
    const event = eventFactory();
    const events = [
      event('job-started'),
      event('pvc-deleting', { pvc: 'a' }),
      event('pvc-deleted', { pvc: 'a' }),
      event('job-finished', { status: 'succeeded' }),
    ];
    const afters: number[] = [];
    server.use(
      http.get(`${base}/v1/prune-jobs/job-1/events`, ({ request }) => {
        const after = Number(new URL(request.url).searchParams.get('after'));
        afters.push(after);
        // The first connection drops after two events.
        const batch =
          afters.length === 1
            ? events.slice(0, 2)
            : events.filter(e => e.seq > after);
        return sse(batch.map(frame).join(''));
      }),
    );
    const { client } = makeClient();
    const received: number[] = [];
    await client.streamJobEvents('job-1', 0, e => received.push(e.seq));
    expect(afters).toEqual([0, 2]);
    expect(received).toEqual([1, 2, 3, 4]);
  });

  it('rejects with a ResponseError when the stream is refused', async () => {
    server.use(
      http.get(`${base}/v1/prune-jobs/nope/events`, () =>
        errorBody(404, 'NotFoundError', 'No prune job with id "nope"'),
      ),
    );
    const { client } = makeClient();
    const error = await client
      .streamJobEvents('nope', 0, () => {})
      .catch(e => e);
    expect(error).toBeInstanceOf(ResponseError);
    expect(describeError(error)).toBe('No prune job with id "nope"');
  });

  it('stops when aborted', async () => {
    server.use(
      http.get(
        `${base}/v1/prune-jobs/job-1/events`,
        () =>
          new HttpResponse(new ReadableStream({ start() {} }), {
            headers: { 'Content-Type': 'text/event-stream' },
          }),
      ),
    );
    const { client } = makeClient();
    const ctrl = new AbortController();
    const done = client.streamJobEvents('job-1', 0, () => {}, ctrl.signal);
    ctrl.abort();
    await expect(done).resolves.toBeUndefined();
  });
});
