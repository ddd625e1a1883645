import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { ResponseError } from '@backstage/errors';
import { mockApis, registerMswTestHooks } from '@backstage/test-utils';
import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { PvcPrunerClient } from '../../api/PvcPrunerClient';
import { PvcPrunerCard } from './PvcPrunerCard';
import { FakePvcPrunerApi } from '../../__testUtils__/FakePvcPrunerApi';
import {
  GiB,
  eventFactory,
  makeJob,
  makeOrphan,
  makeProdResponse,
  makeResponse,
  makeStatefulSet,
} from '../../__testUtils__/fixtures';
import { makeEntity, renderWithApis } from '../../__testUtils__/renderWithApis';
import { dryRunButton, pruneButton } from '../../__testUtils__/pruneControls';

async function forbidden() {
  return ResponseError.fromResponse(
    new Response(
      JSON.stringify({
        error: { name: 'NotAllowedError', message: 'not allowed' },
        response: { statusCode: 403 },
      }),
      {
        status: 403,
        statusText: 'Forbidden',
        headers: { 'Content-Type': 'application/json' },
      },
    ),
  );
}

describe('PvcPrunerCard', () => {
  it('shows progress while loading', async () => {
    const api = new FakePvcPrunerApi();
    await renderWithApis(<PvcPrunerCard />, { api });
    expect(screen.getByText('Orphaned volumes')).toBeInTheDocument();
    expect(screen.getByTestId('progress')).toBeInTheDocument();
  });

  it('shows an empty state when there is nothing to prune', async () => {
    const api = new FakePvcPrunerApi();
    api.orphans = async () =>
      makeProdResponse(makeStatefulSet('db', { orphans: [] }));
    await renderWithApis(<PvcPrunerCard />, { api });
    expect(await screen.findByText('Nothing to prune')).toBeInTheDocument();
    expect(screen.getByText(/0 orphaned claims/)).toBeInTheDocument();
  });

  it('still says what it withholds when nothing is left to prune', async () => {
    const api = new FakePvcPrunerApi();
    api.orphans = async () =>
      makeResponse([
        {
          cluster: 'demo',
          ok: true,
          statefulSets: [makeStatefulSet('cart', { orphans: [] })],
          withheld: {
            statefulSets: 1,
            refusedClaimants: ['component:default/ledger'],
          },
        },
      ]);
    await renderWithApis(<PvcPrunerCard />, { api });
    expect(await screen.findByText('Nothing to prune')).toBeInTheDocument();
    expect(
      screen.getByText(/that you may see left claims behind/),
    ).toBeInTheDocument();
    expect(screen.getByText('1 StatefulSet not shown')).toBeInTheDocument();
    expect(
      screen.getByRole('link', { name: 'component:default/ledger' }),
    ).toBeInTheDocument();
  });

  it('lists orphans per cluster and StatefulSet, with totals and hazards', async () => {
    const api = new FakePvcPrunerApi();
    api.orphans = async () =>
      makeProdResponse(
        makeStatefulSet('db', {
          replicas: 2,
          inUse: [{ template: 'data', ordinals: [1] }],
        }),
      );
    await renderWithApis(<PvcPrunerCard />, { api });
    expect(await screen.findByText('Cluster prod')).toBeInTheDocument();
    expect(screen.getByText('shop/db')).toBeInTheDocument();
    expect(screen.getByText(/runs ordinals 0–1/)).toBeInTheDocument();
    expect(screen.getByText(/whenScaled/)).toBeInTheDocument();
    expect(screen.getByText('data-db-2')).toBeInTheDocument();
    expect(screen.getByText('data-db-3')).toBeInTheDocument();
    expect(
      screen.getByText(/2 orphaned claims/, { selector: 'strong' }),
    ).toBeInTheDocument();
    expect(
      screen.getByText('20 GiB', { selector: 'strong' }),
    ).toBeInTheDocument();
    expect(
      screen.getByText(/scaled to 3 replicas or more/),
    ).toBeInTheDocument();
    expect(
      screen.getByText(
        /At ≥ 4 replicas, reattached to pod db-3 with its old data/,
      ),
    ).toBeInTheDocument();
    expect(
      screen.getByRole('button', { name: /1 claim kept, and why/ }),
    ).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Refresh' })).toBeEnabled();
  });

  it("offers the orphans answer's snapshot settings in the prune dialog, and sends the choice", async () => {
    const api = new FakePvcPrunerApi();
    api.orphans = async () => ({
      ...makeProdResponse(
        makeStatefulSet('db', {
          orphans: [
            makeOrphan('db', 2, {
              snapshotPlan: {
                kind: 'class',
                volumeSnapshotClass: 'csi-snapshots',
              },
            }),
          ],
        }),
      ),
      snapshots: { enabled: true, retentionDays: 3, required: true },
    });
    await renderWithApis(<PvcPrunerCard />, { api });
    await userEvent.click(
      await screen.findByRole('button', {
        name: 'Dry run prune of db',
      }),
    );
    const dialog = within(screen.getByRole('dialog'));
    expect(
      dialog.getByRole('checkbox', { name: 'Keep a snapshot for 3 days' }),
    ).toBeChecked();
    await userEvent.click(
      dialog.getByRole('button', { name: 'Start dry run' }),
    );
    expect(api.started).toEqual([
      expect.objectContaining({ statefulSet: 'db', snapshot: true }),
    ]);
  });

  it('warns about Retain volumes in words and an icon, and totals them apart', async () => {
    const api = new FakePvcPrunerApi();
    const retained = makeOrphan('db', 2, {
      volume: {
        name: 'pv-keep',
        reclaimPolicy: 'Retain',
        phase: 'Bound',
        retained: true,
      },
      capacityBytes: 5 * GiB,
    });
    api.orphans = async () =>
      makeProdResponse(
        makeStatefulSet('db', { orphans: [retained, makeOrphan('db', 3)] }),
      );
    await renderWithApis(<PvcPrunerCard />, { api });
    expect(
      await screen.findByText(
        'Retain: the disk survives pruning and is still billed',
      ),
    ).toBeInTheDocument();
    expect(
      screen.getByText(/1 claim on Retain volumes \(5 GiB\)/),
    ).toBeInTheDocument();
    expect(
      screen.getByText(/Plus 5 GiB on Retain volumes/),
    ).toBeInTheDocument();
    expect(
      screen.getByText(/10 GiB reclaimable, 5 GiB on Retain volumes/),
    ).toBeInTheDocument();
  });

  it('shows a failed cluster without hiding the others', async () => {
    const api = new FakePvcPrunerApi();
    api.orphans = async () =>
      makeResponse([
        {
          cluster: 'broken',
          ok: false,
          error: {
            name: 'ClusterRequestError',
            message: 'connect ECONNREFUSED',
            statusCode: 503,
          },
        },
        { cluster: 'prod', ok: true, statefulSets: [makeStatefulSet('db')] },
      ]);
    await renderWithApis(<PvcPrunerCard />, { api });
    const alert = await screen.findByText(
      /Could not read cluster broken \(HTTP 503\)/,
    );
    expect(alert).toBeInTheDocument();
    expect(screen.getByText(/connect ECONNREFUSED/)).toBeInTheDocument();
    expect(screen.getByText('data-db-2')).toBeInTheDocument();
  });

  it('explains, instead of failing, when reading is denied', async () => {
    const api = new FakePvcPrunerApi();
    await renderWithApis(<PvcPrunerCard />, {
      api,
      deny: ['pvc-pruner.orphans.read'],
    });
    expect(
      await screen.findByText("You can't see this entity's orphaned volumes"),
    ).toBeInTheDocument();
  });

  it('explains when the backend answers 403', async () => {
    const api = new FakePvcPrunerApi();
    const error = await forbidden();
    api.orphans = async () => {
      throw error;
    };
    await renderWithApis(<PvcPrunerCard />, { api });
    expect(
      await screen.findByText("You can't see this entity's orphaned volumes"),
    ).toBeInTheDocument();
  });

  it('disables pruning and says why when prune is denied', async () => {
    const api = new FakePvcPrunerApi();
    api.orphans = async () => makeProdResponse(makeStatefulSet('db'));
    await renderWithApis(<PvcPrunerCard />, {
      api,
      deny: ['pvc-pruner.prune'],
    });
    expect(
      await screen.findByText(
        /You don't own this entity, or you're not allowed to prune/,
      ),
    ).toBeInTheDocument();
    expect(dryRunButton('db')).toBeDisabled();
    expect(pruneButton('db')).toBeDisabled();
  });

  it('attaches to a running job from the start when the page loads', async () => {
    const api = new FakePvcPrunerApi();
    api.orphans = async () => makeProdResponse(makeStatefulSet('db'));
    api.jobs = [
      makeJob({
        id: 'job-live',
        status: 'running',
        requestedBy: 'user:default/ann',
        pvcs: [makeOrphan('db', 2), makeOrphan('db', 3)].map(
          ({ name, uid }) => ({ name, uid }),
        ),
        finishedAt: undefined,
      }),
    ];
    const event = eventFactory('job-live');
    api.emit(
      event('job-queued'),
      event('job-started'),
      event('pvc-deleting', { pvc: 'data-db-2' }),
    );
    await renderWithApis(<PvcPrunerCard />, { api });
    const panel = await screen.findByRole('region', {
      name: 'Prune of shop/db progress',
    });
    expect(api.streamed).toContainEqual({ jobId: 'job-live', after: 0 });
    expect(
      within(panel).getByText(/started by user:default\/ann/),
    ).toBeInTheDocument();
    expect(within(panel).getByText('0 of 2 claims done')).toBeInTheDocument();
    expect(
      within(screen.getByTestId('progress-data-db-2')).getByText('Deleting…'),
    ).toBeInTheDocument();
    expect(pruneButton('db')).toBeDisabled();
  });

  it('shows the history, each job opening to its events', async () => {
    const api = new FakePvcPrunerApi();
    api.orphans = async () => makeProdResponse(makeStatefulSet('db'));
    api.jobs = [
      makeJob({
        id: 'job-old',
        dryRun: true,
        requestedBy: 'user:default/bob',
        summary: {
          deleted: [
            {
              name: 'data-db-2',
              uid: 'uid-data-db-2',
              bytes: 10 * GiB,
              volume: {
                name: 'pv-1',
                reclaimPolicy: 'Delete',
                fate: 'deleted',
              },
            },
          ],
          terminating: [],
          skipped: [],
          failed: [],
          bytesReclaimed: 10 * GiB,
        },
      }),
    ];
    const event = eventFactory('job-old');
    api.emit(
      event('job-queued', { message: 'Dry run queued by user:default/bob' }),
      event('pvc-deleted', {
        pvc: 'data-db-2',
        message: 'Dry run: data-db-2 would be deleted',
      }),
      event('job-finished', {
        status: 'succeeded',
        message: 'Dry run succeeded',
      }),
    );
    await renderWithApis(<PvcPrunerCard />, { api });
    const history = await screen.findByRole('region', {
      name: 'Prune history',
    });
    await waitFor(() =>
      expect(
        within(history).getByText(/by user:default\/bob/),
      ).toBeInTheDocument(),
    );
    expect(within(history).getByText('Dry run')).toBeInTheDocument();
    expect(within(history).getByText('Succeeded')).toBeInTheDocument();
    expect(
      within(history).getByText(/1 would be deleted, 0 skipped, 0 failed/),
    ).toBeInTheDocument();
    await userEvent.click(within(history).getByText(/shop\/db in prod/));
    expect(
      await within(history).findByText('Dry run: data-db-2 would be deleted'),
    ).toBeInTheDocument();
    expect(
      within(history).getByText('Dry run queued by user:default/bob'),
    ).toBeInTheDocument();
    expect(
      within(history).getByText(/10 GiB would be reclaimed/, {
        selector: 'strong',
      }),
    ).toBeInTheDocument();
  });
});

describe('PvcPrunerCard and the user tokens of client-side clusters', () => {
  const base = 'http://backstage.test/api/pvc-pruner';
  const server = setupServer();
  registerMswTestHooks(server);

  it.each([
    [
      'names one cluster',
      { 'backstage.io/kubernetes-cluster': 'corp' },
      ['oidc.okta'],
    ],
    ['names none', {}, ['oidc.okta', 'google']],
  ])(
    'asks for, and sends, only the tokens of the clusters an entity that %s maps to',
    async (_what, annotations, keys) => {
      const sent: string[][] = [];
      server.use(
        http.get(`${base}/v1/clusters`, () =>
          HttpResponse.json({
            items: [
              { name: 'corp', authProvider: 'oidc', userTokenKey: 'oidc.okta' },
              { name: 'gke', authProvider: 'google', userTokenKey: 'google' },
            ],
          }),
        ),
        http.get(`${base}/v1/orphans`, ({ request }) => {
          sent.push(
            [...request.headers.keys()].filter(h =>
              h.startsWith('backstage-kubernetes-authorization'),
            ),
          );
          return HttpResponse.json(makeResponse([]));
        }),
        // The claims of deleted StatefulSets are read with the same tokens.
        http.get(`${base}/v1/left-behind`, ({ request }) => {
          sent.push(
            [...request.headers.keys()].filter(h =>
              h.startsWith('backstage-kubernetes-authorization'),
            ),
          );
          return HttpResponse.json({ entityRef: 'x', clusters: [] });
        }),
        http.get(`${base}/v1/prune-jobs`, () =>
          HttpResponse.json({ items: [] }),
        ),
      );
      const getCredentials = jest.fn(async (key: string) => ({
        token: `${key}-token`,
      }));
      const api = new PvcPrunerClient({
        discoveryApi: mockApis.discovery({ baseUrl: 'http://backstage.test' }),
        fetchApi: { fetch },
        kubernetesAuthProvidersApi: {
          getCredentials,
          decorateRequestBodyForAuth: jest.fn(),
        },
      });

      await renderWithApis(<PvcPrunerCard />, {
        api,
        entity: makeEntity({
          'backstage.io/kubernetes-id': 'shop',
          ...annotations,
        }),
      });

      expect(await screen.findByText('Nothing to prune')).toBeInTheDocument();
      await waitFor(() => expect(sent).toHaveLength(2));
      expect([...new Set(getCredentials.mock.calls.map(c => c[0]))]).toEqual(
        keys,
      );
      // Headers come sorted by name.
      const headers = keys
        .map(k => `backstage-kubernetes-authorization-${k.replace('.', '-')}`)
        .sort();
      expect(sent).toEqual([headers, headers]);
    },
  );
});
