import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import {
  AutoPruneStatus,
  OrphansResponse,
} from 'backstage-plugin-pvc-pruner-common';
import { FakePvcPrunerApi } from '../../__testUtils__/FakePvcPrunerApi';
import {
  makeOrphan,
  makeProdResponse,
  makeStatefulSet,
} from '../../__testUtils__/fixtures';
import { renderWithApis } from '../../__testUtils__/renderWithApis';
import { formatTime } from '../../utils/format';
import { OrphanedVolumes } from '../OrphanedVolumes';

const DAY = 86400_000;
const nextRunAt = '2026-12-03T11:00:00.000Z';
const status = (overrides: Partial<AutoPruneStatus>): AutoPruneStatus => ({
  state: 'opted-in',
  annotation: 'pvc-pruner.backstage.io/auto-prune',
  keepAnnotation: 'pvc-pruner.backstage.io/keep',
  minimumGraceMs: DAY,
  ...overrides,
});

/** Two StatefulSets with orphans, and the entity's auto-prune status. */
function answer(
  autoPrune: AutoPruneStatus | undefined,
  eligibleAt?: string,
): OrphansResponse {
  return {
    ...makeProdResponse(
      makeStatefulSet('db', {
        orphans: [makeOrphan('db', 2, eligibleAt ? { eligibleAt } : {})],
      }),
      makeStatefulSet('cache'),
    ),
    ...(autoPrune ? { autoPrune } : {}),
  };
}

async function renderCard(api: FakePvcPrunerApi) {
  const result = await renderWithApis(
    <OrphanedVolumes
      entityRef="component:default/shop"
      title="Orphaned volumes"
    />,
    { api },
  );
  await screen.findByText('data-db-2');
  return result;
}

const section = () =>
  screen.queryByRole('region', { name: 'Automatic pruning' });

describe('AutoPruneSection', () => {
  it('on an opted-in entity, says it is on, with the grace period and the next run', async () => {
    const api = new FakePvcPrunerApi();
    api.orphans = async () =>
      answer(
        status({
          value: '7d',
          graceMs: 7 * DAY,
          notifyBeforeMs: 2 * DAY,
          snapshots: true,
          nextRunAt,
        }),
      );
    await renderCard(api);
    expect(section()).toHaveTextContent(
      `Automatic pruning: on, after a grace period of 7d (pvc-pruner.backstage.io/auto-prune): an orphan is deleted 7d after it was first seen orphaned, with a snapshot first, unless it is kept. Owners are told 2d before. Next run ${formatTime(
        nextRunAt,
      )}.`,
    );
  });

  it('shows the annotation’s problem prominently when it is invalid', async () => {
    const api = new FakePvcPrunerApi();
    api.orphans = async () =>
      answer(
        status({
          state: 'invalid',
          value: '2h',
          problem:
            'below the platform minimum of 1d (pvcPruner.autoPrune.minimumGrace); write at least "1d"',
        }),
      );
    await renderCard(api);
    const alert = within(section()!).getByRole('alert');
    expect(alert).toHaveTextContent(
      'Automatic pruning is off for this entity until its annotation is fixed',
    );
    expect(alert).toHaveTextContent(
      'pvc-pruner.backstage.io/auto-prune: "2h": below the platform minimum of 1d (pvcPruner.autoPrune.minimumGrace); write at least "1d"',
    );
  });

  it('says how to opt in once for the card, not per StatefulSet, suggesting a grace the platform allows', async () => {
    const api = new FakePvcPrunerApi();
    api.orphans = async () =>
      answer(status({ state: 'not-opted-in', minimumGraceMs: 14 * DAY }));
    await renderCard(api);
    expect(screen.getAllByText(/Prune automatically/)).toHaveLength(1);
    expect(section()).toHaveTextContent(
      'Prune automatically: add pvc-pruner.backstage.io/auto-prune: "2w" to this entity\'s catalog-info.yaml annotations.',
    );
    expect(screen.queryByRole('button', { name: /Keep data-db-2/ })).toBeNull();
  });

  it('says nothing when the platform has not enabled it, or the backend does not say', async () => {
    for (const autoPrune of [status({ state: 'disabled' }), undefined]) {
      const api = new FakePvcPrunerApi();
      api.orphans = async () => answer(autoPrune);
      const { unmount } = await renderCard(api);
      expect(section()).toBeNull();
      expect(document.body.textContent).not.toMatch(/automatic/i);
      unmount();
    }
  });

  it('reloads the list after a claim is kept, showing who keeps it', async () => {
    const api = new FakePvcPrunerApi();
    const eligibleAt = new Date(Date.now() + 3 * DAY).toISOString();
    let kept = false;
    api.orphans = async () => {
      const response = answer(
        status({ value: '7d', graceMs: 7 * DAY }),
        eligibleAt,
      );
      if (kept) {
        const sts = response.clusters[0].ok
          ? response.clusters[0].statefulSets[0]
          : undefined;
        sts!.orphans[0] = makeOrphan('db', 2, {
          keep: {
            source: 'card',
            keptBy: 'user:default/guest',
            reason: 'audit',
          },
        });
      }
      return response;
    };
    api.keepClaimAnswer = async request => {
      kept = true;
      return { source: 'card', reason: request.reason };
    };
    await renderCard(api);
    expect(
      screen.getByText(`Eligible on ${formatTime(eligibleAt)}`),
    ).toBeInTheDocument();
    await userEvent.click(
      screen.getByRole('button', {
        name: 'Keep data-db-2 from automatic pruning',
      }),
    );
    await userEvent.type(
      screen.getByRole('textbox', { name: /Reason/ }),
      'audit',
    );
    await userEvent.click(screen.getByRole('button', { name: 'Keep' }));
    expect(
      await screen.findByText('Kept by user:default/guest: audit'),
    ).toBeInTheDocument();
    await waitFor(() =>
      expect(screen.queryByText(/Eligible on/)).not.toBeInTheDocument(),
    );
  });
});
