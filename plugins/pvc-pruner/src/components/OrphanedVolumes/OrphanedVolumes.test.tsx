import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { LeftBehindResponse } from 'backstage-plugin-pvc-pruner-common';
import { OrphanedVolumes } from './OrphanedVolumes';
import { FakePvcPrunerApi } from '../../__testUtils__/FakePvcPrunerApi';
import {
  makeOrphan,
  makeProdResponse,
  makeStatefulSet,
} from '../../__testUtils__/fixtures';
import { renderWithApis } from '../../__testUtils__/renderWithApis';

/** Matches the innermost element whose whole text (across <strong>s) matches. */
const fullText = (re: RegExp) => (_: string, el: Element | null) =>
  Boolean(
    el &&
      re.test(el.textContent ?? '') &&
      [...el.children].every(c => !re.test(c.textContent ?? '')),
  );

const renderOrphanedVolumes = (api: FakePvcPrunerApi) =>
  renderWithApis(
    <OrphanedVolumes
      entityRef="component:default/shop"
      title="Orphaned volumes"
    />,
    { api },
  );

/** cart's card after old-db was deleted: its one claim, recorded as old-db's. */
const leftByOldDb = (entityRef: string): LeftBehindResponse => ({
  entityRef,
  clusters: [
    {
      cluster: 'prod',
      ok: true,
      groups: [
        {
          namespace: 'shop',
          statefulSet: { name: 'old-db', uid: 'gone' },
          evidence: 'lineage',
          lastSeenAt: '2026-12-03T10:00:00.000Z',
          claimants: [entityRef],
          report: makeStatefulSet('old-db', {
            replicas: 0,
            orphans: [makeOrphan('old-db', 0)],
          }),
        },
      ],
    },
  ],
});

describe('OrphanedVolumes', () => {
  function pricedResponse() {
    const orphans = [
      makeOrphan('db', 2, {
        monthlyCost: 1,
        firstSeenOrphanedAt: new Date(
          Date.now() - 27.5 * 86400_000,
        ).toISOString(),
      }),
      makeOrphan('db', 3, {
        monthlyCost: 2,
        volume: {
          name: 'pv-kept',
          reclaimPolicy: 'Retain',
          phase: 'Bound',
          retained: true,
        },
      }),
    ];
    const sts = {
      ...makeStatefulSet('db', { orphans }),
      reclaimableMonthlyCost: 1,
      retainedMonthlyCost: 2,
      firstSeenOrphanedAt: orphans[0].firstSeenOrphanedAt,
    };
    const response = makeProdResponse(sts);
    return {
      ...response,
      totals: {
        ...response.totals,
        reclaimableMonthlyCost: 1,
        retainedMonthlyCost: 2,
      },
      pricing: { currency: 'USD', unpricedStorageClasses: ['archive'] },
    };
  }

  it('shows the backend’s monthly costs per claim, per StatefulSet and in total, and what Retain volumes keep costing', async () => {
    const api = new FakePvcPrunerApi();
    api.orphans = async () => pricedResponse();
    await renderOrphanedVolumes(api);
    expect(
      await screen.findByText(
        fullText(/10 GiB reclaimable by pruning · \$1\.00 a month/),
      ),
    ).toBeInTheDocument();
    expect(
      screen.getByText(
        fullText(/Plus 10 GiB on Retain volumes, \$2\.00 a month/),
      ),
    ).toBeInTheDocument();
    expect(
      screen.getByText(fullText(/still billed, \$2\.00 a month, until/)),
    ).toBeInTheDocument();
    expect(
      screen.getByText(fullText(/No price for StorageClass archive/)),
    ).toBeInTheDocument();
    expect(
      screen.getByText(fullText(/10 GiB reclaimable \(\$1\.00 a month\)/)),
    ).toBeInTheDocument();
    expect(screen.getAllByText('$1.00 a month').length).toBeGreaterThan(0);
    expect(screen.getAllByText('$2.00 a month').length).toBeGreaterThan(0);
    expect(
      screen.getAllByText(
        fullText(/seen orphaned since .* \(at least 27 days\)/),
      ).length,
    ).toBe(2);
  });

  it('without pricing shows GiB only: no amount, no currency', async () => {
    const api = new FakePvcPrunerApi();
    api.orphans = async () => makeProdResponse(makeStatefulSet('db'));
    await renderOrphanedVolumes(api);
    expect(
      await screen.findByText(fullText(/20 GiB reclaimable by pruning/)),
    ).toBeInTheDocument();
    expect(document.body.textContent).not.toMatch(/a month|\$|€|seen orphaned/);
  });

  it('reloads on Refresh', async () => {
    const api = new FakePvcPrunerApi();
    let calls = 0;
    api.orphans = async () => {
      calls += 1;
      const orphans = calls === 1 ? [makeOrphan('db', 2)] : [];
      return makeProdResponse(makeStatefulSet('db', { orphans }));
    };
    await renderOrphanedVolumes(api);
    expect(await screen.findByText('data-db-2')).toBeInTheDocument();
    await userEvent.click(screen.getByRole('button', { name: 'Refresh' }));
    expect(await screen.findByText('Nothing to prune')).toBeInTheDocument();
  });

  it('shows the claims a deleted StatefulSet left, read with the same refresh, and does not say there is nothing to prune', async () => {
    const api = new FakePvcPrunerApi();
    api.orphans = async () =>
      makeProdResponse(makeStatefulSet('db', { orphans: [] }));
    let reads = 0;
    api.leftBehind = async entityRef => {
      reads += 1;
      return leftByOldDb(entityRef);
    };
    await renderOrphanedVolumes(api);
    expect(await screen.findByText('data-old-db-0')).toBeInTheDocument();
    expect(
      screen.getByText(/^Left by StatefulSet old-db, deleted; last seen/),
    ).toBeInTheDocument();
    expect(screen.queryByText('Nothing to prune')).not.toBeInTheDocument();
    await userEvent.click(screen.getByRole('button', { name: 'Refresh' }));
    await waitFor(() => expect(reads).toBe(2));
  });

  it('with nothing to prune, still shows the StatefulSets whose claims a scale-up would reattach, and why they are kept', async () => {
    const api = new FakePvcPrunerApi();
    const keptAs = (
      sts: string,
      ordinals: number[],
      reason: 'paused' | 'autoscaler-range',
    ) =>
      ordinals.map(ordinal => ({
        name: `data-${sts}-${ordinal}`,
        uid: `u-${sts}-${ordinal}`,
        template: 'data',
        ordinal,
        reason,
        ...(reason === 'autoscaler-range'
          ? { autoscaler: { name: `${sts}-hpa`, maxReplicas: 5 } }
          : {}),
      }));
    api.orphans = async () =>
      makeProdResponse(
        makeStatefulSet('cache', { replicas: 3, orphans: [] }),
        makeStatefulSet('sessions', {
          replicas: 2,
          orphans: [],
          kept: keptAs('sessions', [2, 3, 4], 'autoscaler-range'),
        }),
        makeStatefulSet('analytics', {
          replicas: 0,
          orphans: [],
          kept: keptAs('analytics', [0, 1, 2], 'paused'),
        }),
      );
    await renderOrphanedVolumes(api);

    expect(
      await screen.findByText(
        "Nothing to prune: the claims component:default/shop's StatefulSets left behind are kept, because a scale-up would reattach them.",
      ),
    ).toBeInTheDocument();
    expect(screen.queryByText('Nothing to prune')).not.toBeInTheDocument();
    expect(
      screen.getByRole('region', { name: 'StatefulSet shop/sessions' }),
    ).toHaveTextContent(
      '3 claims kept for HorizontalPodAutoscaler sessions-hpa',
    );
    expect(
      screen.getByRole('region', { name: 'StatefulSet shop/analytics' }),
    ).toHaveTextContent('analytics is paused at 0 replicas: 3 claims kept');
    expect(
      screen.queryByRole('region', { name: 'StatefulSet shop/cache' }),
    ).not.toBeInTheDocument();
  });

  it('with claims kept for a scale-up and claims of a deleted StatefulSet, does not say there is nothing to prune', async () => {
    const api = new FakePvcPrunerApi();
    api.orphans = async () =>
      makeProdResponse(
        makeStatefulSet('analytics', {
          replicas: 0,
          orphans: [],
          kept: [
            {
              name: 'data-analytics-0',
              uid: 'u-analytics-0',
              template: 'data',
              ordinal: 0,
              reason: 'paused',
            },
          ],
        }),
      );
    api.leftBehind = async entityRef => leftByOldDb(entityRef);
    await renderOrphanedVolumes(api);
    expect(await screen.findByText('data-old-db-0')).toBeInTheDocument();
    expect(
      screen.getByText(
        "The claims component:default/shop's StatefulSets left behind are kept, because a scale-up would reattach them; only the claims of deleted StatefulSets, below, are left to prune.",
      ),
    ).toBeInTheDocument();
    expect(screen.queryByText(/^Nothing to prune: /)).not.toBeInTheDocument();
    expect(screen.queryByText('Nothing to prune')).not.toBeInTheDocument();
  });

  it('shows an error panel when the backend fails', async () => {
    const api = new FakePvcPrunerApi();
    api.orphans = async () => {
      throw new Error(
        'Entity component:default/shop has no Kubernetes annotations',
      );
    };
    await renderOrphanedVolumes(api);
    expect(
      await screen.findByText(/Could not list orphaned volumes/),
    ).toBeInTheDocument();
  });

  it('renders 1,000 orphans across 10 StatefulSets paged, ten rows a table', async () => {
    const api = new FakePvcPrunerApi();
    const statefulSets = Array.from({ length: 10 }, (_, s) =>
      makeStatefulSet(`sts-${s}`, {
        orphans: Array.from({ length: 100 }, (__, i) =>
          makeOrphan(`sts-${s}`, i + 2),
        ),
      }),
    );
    const response = makeProdResponse(...statefulSets);
    api.orphans = async () => response;
    await renderOrphanedVolumes(api);
    await waitFor(() =>
      expect(screen.getAllByText('100 orphaned claims')).toHaveLength(10),
    );
    expect(
      screen.getByText(/1000 orphaned claims/, { selector: 'strong' }),
    ).toBeInTheDocument();
    // Ten rows per table are rendered, not a thousand.
    // How fast that paints is a benchmark's figure (npm run bench:frontend), not a unit test's.
    expect(screen.getAllByText(/^data-sts-\d-\d+$/)).toHaveLength(100);
  });
});
