import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import {
  AutoPruneStatus,
  StatefulSetOrphans,
} from 'backstage-plugin-pvc-pruner-common';
import { FakePvcPrunerApi } from '../../__testUtils__/FakePvcPrunerApi';
import { makeOrphan, makeStatefulSet } from '../../__testUtils__/fixtures';
import { NoActiveJobs } from '../../__testUtils__/NoActiveJobs';
import { renderWithApis } from '../../__testUtils__/renderWithApis';
import { responseError } from '../../__testUtils__/responseError';
import { formatTime } from '../../utils/format';
import { StatefulSetSection } from '../StatefulSetSection';

const optedIn: AutoPruneStatus = {
  state: 'opted-in',
  annotation: 'pvc-pruner.backstage.io/auto-prune',
  keepAnnotation: 'pvc-pruner.backstage.io/keep',
  value: '7d',
  graceMs: 7 * 86400_000,
};
const inTwoDays = new Date(Date.now() + 2 * 86400_000).toISOString();
const anHourAgo = new Date(Date.now() - 3600_000).toISOString();
const keptAt = '2026-12-01T09:00:00.000Z';

/** db's orphans: one eligible in two days, one kept through the card, one by its annotation, one eligible already. */
const db = makeStatefulSet('db', {
  orphans: [
    makeOrphan('db', 2, { eligibleAt: inTwoDays }),
    makeOrphan('db', 3, {
      keep: {
        source: 'card',
        keptBy: 'user:default/ann',
        keptAt,
        reason: 'holds the March export',
      },
    }),
    makeOrphan('db', 4, { keep: { source: 'annotation' } }),
    makeOrphan('db', 5, { eligibleAt: anHourAgo }),
  ],
});

/** The section as the card shows it, with the entity's auto-prune status. */
function renderSection(
  api: FakePvcPrunerApi,
  options: {
    statefulSet?: StatefulSetOrphans;
    autoPrune?: AutoPruneStatus;
    pruneDeniedReason?: string;
    onKeepsChanged?: () => void;
  } = {},
) {
  return renderWithApis(
    <NoActiveJobs>
      <StatefulSetSection
        entityRef="component:default/shop"
        cluster="prod"
        statefulSet={options.statefulSet ?? db}
        autoPrune={options.autoPrune ?? optedIn}
        pruneDeniedReason={options.pruneDeniedReason}
        onKeepsChanged={options.onKeepsChanged}
      />
    </NoActiveJobs>,
    { api },
  );
}

const row = (claim: string) => screen.getByText(claim).closest('tr')!;

describe('ClaimKeeping', () => {
  it('says per claim when it becomes eligible, and who keeps it and why', async () => {
    await renderSection(new FakePvcPrunerApi());
    expect(
      within(row('data-db-2')).getByText(
        `Eligible on ${formatTime(inTwoDays)}`,
      ),
    ).toBeInTheDocument();
    expect(
      within(row('data-db-3')).getByText(
        `Kept by user:default/ann on ${formatTime(
          keptAt,
        )}: holds the March export`,
      ),
    ).toBeInTheDocument();
    expect(
      within(row('data-db-4')).getByText(
        'Kept by its pvc-pruner.backstage.io/keep annotation',
      ),
    ).toBeInTheDocument();
    expect(
      within(row('data-db-5')).getByText(
        `Eligible since ${formatTime(anHourAgo)}: the next run prunes it`,
      ),
    ).toBeInTheDocument();
    // Only the card's keep can be ended on the card; the annotation is the cluster's.
    expect(
      screen.getByRole('button', { name: 'Stop keeping data-db-3' }),
    ).toBeEnabled();
    expect(
      screen.queryByRole('button', { name: 'Stop keeping data-db-4' }),
    ).not.toBeInTheDocument();
  });

  it('keeps a claim with the reason and end date given, then reloads the list', async () => {
    const api = new FakePvcPrunerApi();
    const onKeepsChanged = jest.fn();
    await renderSection(api, { onKeepsChanged });
    await userEvent.click(
      screen.getByRole('button', {
        name: 'Keep data-db-2 from automatic pruning',
      }),
    );
    const dialog = screen.getByRole('dialog', { name: 'Keep data-db-2' });
    const keep = within(dialog).getByRole('button', { name: 'Keep' });
    // A reason is required.
    expect(keep).toBeDisabled();
    await userEvent.type(
      within(dialog).getByRole('textbox', { name: /Reason/ }),
      'restoring a backup from it',
    );
    const until = new Date(Date.now() + 30 * 86400_000)
      .toISOString()
      .slice(0, 10);
    // A date input is typed as a whole in jsdom.
    await userEvent.type(
      within(dialog).getByLabelText('Keep until (optional)'),
      until,
    );
    await userEvent.click(keep);
    await waitFor(() => expect(onKeepsChanged).toHaveBeenCalledTimes(1));
    expect(api.claimKeeps).toEqual([
      {
        entityRef: 'component:default/shop',
        cluster: 'prod',
        namespace: 'shop',
        statefulSet: 'db',
        claim: { name: 'data-db-2', uid: 'uid-data-db-2' },
        reason: 'restoring a backup from it',
        until: `${until}T23:59:59.000Z`,
      },
    ]);
    expect(screen.queryByRole('dialog')).not.toBeInTheDocument();
  });

  it('keeps the dialog open with the backend’s reason when the keep is refused', async () => {
    const api = new FakePvcPrunerApi();
    const refusal = await responseError(
      409,
      'ConflictError',
      'data-db-2 is being deleted by an automatic prune',
    );
    api.keepClaimAnswer = () => Promise.reject(refusal);
    const onKeepsChanged = jest.fn();
    await renderSection(api, { onKeepsChanged });
    await userEvent.click(
      screen.getByRole('button', {
        name: 'Keep data-db-2 from automatic pruning',
      }),
    );
    const dialog = screen.getByRole('dialog');
    await userEvent.type(
      within(dialog).getByRole('textbox', { name: /Reason/ }),
      'still needed',
    );
    await userEvent.click(within(dialog).getByRole('button', { name: 'Keep' }));
    expect(
      await within(dialog).findByText(
        'Not kept: data-db-2 is being deleted by an automatic prune',
      ),
    ).toBeInTheDocument();
    expect(api.claimKeeps[0]).not.toHaveProperty('until');
    expect(onKeepsChanged).not.toHaveBeenCalled();
  });

  it('stops keeping a card keep, and says why when that fails', async () => {
    const api = new FakePvcPrunerApi();
    const onKeepsChanged = jest.fn();
    await renderSection(api, { onKeepsChanged });
    await userEvent.click(
      screen.getByRole('button', { name: 'Stop keeping data-db-3' }),
    );
    await waitFor(() => expect(onKeepsChanged).toHaveBeenCalledTimes(1));
    expect(api.claimUnkeeps).toEqual([
      {
        uid: 'uid-data-db-3',
        entityRef: 'component:default/shop',
        cluster: 'prod',
      },
    ]);

    const denial = await responseError(
      403,
      'NotAllowedError',
      'You may not prune component:default/shop',
    );
    api.unkeepClaimAnswer = () => Promise.reject(denial);
    await userEvent.click(
      screen.getByRole('button', { name: 'Stop keeping data-db-3' }),
    );
    expect(
      await screen.findByText(
        'Could not stop keeping data-db-3: You may not prune component:default/shop',
      ),
    ).toBeInTheDocument();
    expect(onKeepsChanged).toHaveBeenCalledTimes(1);
  });

  it('does not let a user who may not prune keep or stop keeping', async () => {
    await renderSection(new FakePvcPrunerApi(), {
      pruneDeniedReason: "You don't own this entity.",
    });
    expect(
      screen.getByRole('button', {
        name: 'Keep data-db-2 from automatic pruning',
      }),
    ).toBeDisabled();
    expect(
      screen.getByRole('button', { name: 'Stop keeping data-db-3' }),
    ).toBeDisabled();
  });

  it('says why a StatefulSet is not automated, and offers no keeping there', async () => {
    const notAutomated = makeStatefulSet('db', {
      orphans: [makeOrphan('db', 2)],
    });
    notAutomated.autoPrune = {
      automated: false,
      reason: 'component:default/billing also claims it and has not opted in',
    };
    await renderSection(new FakePvcPrunerApi(), { statefulSet: notAutomated });
    expect(
      screen.getByText(
        'Automatic pruning does not act on db: component:default/billing also claims it and has not opted in',
      ),
    ).toBeInTheDocument();
    expect(
      screen.queryByRole('button', { name: /from automatic pruning/ }),
    ).not.toBeInTheDocument();
    expect(screen.queryByText('Automatic pruning')).not.toBeInTheDocument();
  });

  it('shows nothing of automatic pruning when the entity has not opted in', async () => {
    await renderSection(new FakePvcPrunerApi(), {
      autoPrune: { ...optedIn, state: 'not-opted-in' },
    });
    expect(screen.getByText('data-db-2')).toBeInTheDocument();
    expect(screen.queryByText(/Eligible on/)).not.toBeInTheDocument();
    expect(
      screen.queryByRole('button', { name: /from automatic pruning/ }),
    ).not.toBeInTheDocument();
  });
});
