import { act, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import {
  SnapshotSettings,
  StatefulSetOrphans,
} from 'backstage-plugin-pvc-pruner-common';
import { StatefulSetSection } from './StatefulSetSection';
import { ActiveJobsProvider } from '../../hooks/ActiveJobsContext';
import { useActiveJobs } from '../../hooks/useActiveJobs';
import { FakePvcPrunerApi } from '../../__testUtils__/FakePvcPrunerApi';
import {
  eventFactory,
  makeJob,
  makeOrphan,
  makeStatefulSet,
} from '../../__testUtils__/fixtures';
import { renderWithApis } from '../../__testUtils__/renderWithApis';
import { responseError } from '../../__testUtils__/responseError';
import {
  dryRunButton,
  pruneButton,
  startDryRun,
} from '../../__testUtils__/pruneControls';

const sts = makeStatefulSet('db', { replicas: 2 });

/** The section in a card that follows its prunes as OrphanedVolumes does. */
function Harness({
  statefulSet = sts,
  entityRef = 'component:default/shop',
  snapshots,
}: {
  statefulSet?: StatefulSetOrphans;
  /** null: a StatefulSet that no entity claims. */
  entityRef?: string | null;
  snapshots?: SnapshotSettings;
}) {
  const { jobs, start, finish, dismiss } = useActiveJobs([]);
  return (
    <ActiveJobsProvider
      value={{ jobs, started: start, finished: finish, dismissed: dismiss }}
    >
      <StatefulSetSection
        entityRef={entityRef ?? undefined}
        cluster="prod"
        statefulSet={statefulSet}
        snapshots={snapshots}
      />
    </ActiveJobsProvider>
  );
}

describe('StatefulSetSection', () => {
  describe('with snapshots enabled', () => {
    const withClass = makeStatefulSet('db', {
      replicas: 2,
      orphans: [
        makeOrphan('db', 2, {
          snapshotPlan: { kind: 'class', volumeSnapshotClass: 'csi-snapshots' },
        }),
      ],
    });
    const dryRunWith = async (untick: boolean) => {
      const api = new FakePvcPrunerApi();
      await renderWithApis(
        <Harness
          statefulSet={withClass}
          snapshots={{ enabled: true, retentionDays: 7, required: true }}
        />,
        { api },
      );
      await userEvent.click(dryRunButton('db'));
      if (untick)
        await userEvent.click(
          screen.getByRole('checkbox', { name: 'Keep a snapshot for 7 days' }),
        );
      await startDryRun();
      return api.started;
    };

    it('sends snapshot: true with the prune by default when a claim has a class', async () => {
      expect(await dryRunWith(false)).toEqual([
        expect.objectContaining({ dryRun: true, snapshot: true }),
      ]);
    });

    it('sends snapshot: false once the user unticks it', async () => {
      expect(await dryRunWith(true)).toEqual([
        expect.objectContaining({ dryRun: true, snapshot: false }),
      ]);
    });
  });

  it('prunes exactly the confirmed claims and follows the job', async () => {
    const api = new FakePvcPrunerApi();
    api.jobs = [makeJob({ status: 'succeeded' })];
    await renderWithApis(<Harness />, { api });
    await userEvent.click(pruneButton('db'));
    const dialog = screen.getByRole('dialog');
    await userEvent.type(within(dialog).getByRole('textbox'), 'db');
    await userEvent.click(
      within(dialog).getByRole('button', { name: 'Delete 2 claims' }),
    );

    expect(api.started).toEqual([
      {
        entityRef: 'component:default/shop',
        cluster: 'prod',
        namespace: 'shop',
        statefulSet: 'db',
        pvcs: [
          { name: 'data-db-2', uid: 'uid-data-db-2' },
          { name: 'data-db-3', uid: 'uid-data-db-3' },
        ],
        dryRun: false,
      },
    ]);
    const panel = await screen.findByRole('region', {
      name: 'Prune of shop/db progress',
    });
    expect(within(panel).getByText('0 of 2 claims done')).toBeInTheDocument();
    expect(pruneButton('db')).toBeDisabled();
    expect(screen.getByText('A prune of db is under way.')).toBeInTheDocument();

    const event = eventFactory();
    act(() =>
      api.emit(
        event('job-started'),
        event('pvc-deleted', { pvc: 'data-db-2' }),
      ),
    );
    expect(within(panel).getByText('1 of 2 claims done')).toBeInTheDocument();
    act(() =>
      api.emit(
        event('pvc-deleted', { pvc: 'data-db-3' }),
        event('job-finished', { status: 'succeeded' }),
      ),
    );
    expect(
      await within(panel).findByText('Prune finished'),
    ).toBeInTheDocument();
    expect(pruneButton('db')).toBeEnabled();
  });

  it('keeps the dialog open with the lock holder when the backend answers 409', async () => {
    const api = new FakePvcPrunerApi();
    api.startError = new Error(
      'StatefulSet shop/db is being pruned by user:default/ann since 10:00',
    );
    await renderWithApis(<Harness />, { api });
    await userEvent.click(dryRunButton('db'));
    await startDryRun();
    expect(
      await screen.findByText(/being pruned by user:default\/ann/),
    ).toBeInTheDocument();
    expect(screen.getByRole('dialog')).toBeInTheDocument();
  });

  it('names the other entities that claim it, linked, and lets the user prune when they may prune each of them', async () => {
    const shared = {
      ...sts,
      sharedWith: ['component:default/search-index', 'component:default/x'],
    };
    await renderWithApis(<Harness statefulSet={shared} />, {
      api: new FakePvcPrunerApi(),
    });
    const section = screen.getByRole('region', { name: 'StatefulSet shop/db' });
    expect(section).toHaveTextContent(
      'Also claimed by component:default/search-index and component:default/x: their Kubernetes annotations match this StatefulSet too. A prune or a dry run needs pvc-pruner.prune on each of them as well.',
    );
    expect(
      within(section).getByRole('link', {
        name: 'component:default/search-index',
      }),
    ).toHaveAttribute(
      'href',
      '/catalog/default/component/search-index/kubernetes',
    );
    await waitFor(() => expect(pruneButton('db')).toBeEnabled());
    expect(dryRunButton('db')).toBeEnabled();
  });

  it('disables the prune, naming the claimant, when the user may not prune another entity that claims it', async () => {
    const shared = {
      ...sts,
      sharedWith: ['component:default/search-index', 'component:default/x'],
    };
    await renderWithApis(<Harness statefulSet={shared} />, {
      api: new FakePvcPrunerApi(),
      denyPruneOn: ['component:default/search-index'],
    });
    expect(
      await screen.findByText(
        'Pruning db needs pvc-pruner.prune on every entity that claims it, and you lack it on component:default/search-index.',
      ),
    ).toBeInTheDocument();
    expect(pruneButton('db')).toBeDisabled();
    expect(dryRunButton('db')).toBeDisabled();
  });

  it('disables the prune, saying what would vouch for the StatefulSet, when only selectors claim it and the user lacks pvc-pruner.unowned.prune', async () => {
    const unvouched = { ...sts, pruneNeeds: ['pvc-pruner.unowned.prune'] };
    await renderWithApis(<Harness statefulSet={unvouched} />, {
      api: new FakePvcPrunerApi(),
      deny: ['pvc-pruner.unowned.prune'],
    });
    expect(
      await screen.findByText(
        "No entity claims db by its backstage.io/kubernetes-id label, only by label selectors, which do not show it is anyone's own: pruning it needs pvc-pruner.unowned.prune, which you don't hold. Give the StatefulSet that label, and its entity the backstage.io/kubernetes-id annotation.",
      ),
    ).toBeInTheDocument();
    expect(pruneButton('db')).toBeDisabled();
  });

  it('lets a holder of pvc-pruner.unowned.prune prune what only selectors claim', async () => {
    const unvouched = { ...sts, pruneNeeds: ['pvc-pruner.unowned.prune'] };
    await renderWithApis(<Harness statefulSet={unvouched} />, {
      api: new FakePvcPrunerApi(),
    });
    await waitFor(() => expect(pruneButton('db')).toBeEnabled());
  });

  it("shows the backend's 403, naming the claimant refused, in the dialog", async () => {
    const api = new FakePvcPrunerApi();
    api.startError = await responseError(
      403,
      'NotAllowedError',
      'StatefulSet shop/db in cluster "prod" is also claimed by component:default/search-index: pruning it needs pvc-pruner.prune on every entity that claims it, and you lack it on that one',
    );
    await renderWithApis(<Harness />, { api });
    await userEvent.click(pruneButton('db'));
    const dialog = screen.getByRole('dialog');
    await userEvent.type(within(dialog).getByRole('textbox'), 'db');
    await userEvent.click(
      within(dialog).getByRole('button', { name: 'Delete 2 claims' }),
    );
    expect(await within(dialog).findByRole('alert')).toHaveTextContent(
      'Could not start: StatefulSet shop/db in cluster "prod" is also claimed by component:default/search-index: pruning it needs pvc-pruner.prune on every entity that claims it, and you lack it on that one',
    );
  });

  it('prunes a StatefulSet that no entity claims without naming an entity', async () => {
    const api = new FakePvcPrunerApi();
    await renderWithApis(<Harness entityRef={null} />, { api });
    await userEvent.click(dryRunButton('db'));
    await startDryRun();
    await screen.findByRole('region', { name: 'Dry run of shop/db progress' });
    expect(api.started).toHaveLength(1);
    expect(api.started[0]).not.toHaveProperty('entityRef');
    expect(api.started[0]).toMatchObject({
      cluster: 'prod',
      namespace: 'shop',
      statefulSet: 'db',
      dryRun: true,
    });
  });

  it('shows a claim still terminating as such, held by its finalizers, and offers nothing to prune when it is all there is', async () => {
    const held = makeStatefulSet('db', {
      replicas: 2,
      orphans: [],
      kept: [
        {
          name: 'data-db-2',
          uid: 'u2',
          template: 'data',
          ordinal: 2,
          reason: 'terminating',
          finalizers: ['acc.example/backup-hold'],
        },
      ],
    });
    await renderWithApis(<Harness statefulSet={held} />, {
      api: new FakePvcPrunerApi(),
    });
    expect(
      screen.getByText('1 claim still terminating, not deleted'),
    ).toBeInTheDocument();
    expect(screen.getByRole('status')).toHaveTextContent(
      'data-db-2 (held by acc.example/backup-hold)',
    );
    expect(screen.getByText('No orphaned claims.')).toBeInTheDocument();
    expect(screen.queryByText(/reattached to pod/)).not.toBeInTheDocument();
    expect(screen.getByRole('button', { name: /^Prune/ })).toBeDisabled();
  });

  it('says why a paused StatefulSet keeps its claims, and how to retire it, with nothing to prune', async () => {
    const paused = {
      ...makeStatefulSet('db', {
        replicas: 0,
        orphans: [],
        kept: [0, 1, 2].map(ordinal => ({
          name: `data-db-${ordinal}`,
          uid: `u${ordinal}`,
          template: 'data',
          ordinal,
          reason: 'paused' as const,
        })),
      }),
    };
    await renderWithApis(<Harness statefulSet={paused} />, {
      api: new FakePvcPrunerApi(),
    });
    expect(screen.getByText('No orphaned claims.')).toBeInTheDocument();
    const notice = screen.getByRole('status');
    expect(notice).toHaveTextContent(
      'db is paused at 0 replicas: 3 claims kept',
    );
    expect(notice).toHaveTextContent(
      'To retire db instead, delete the StatefulSet itself, then its claims with kubectl',
    );
    expect(screen.getByRole('button', { name: /^Prune/ })).toBeDisabled();
    expect(screen.getByText('3 claims kept, and why')).toBeInTheDocument();
  });
});
