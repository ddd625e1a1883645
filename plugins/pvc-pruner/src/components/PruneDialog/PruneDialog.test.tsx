import { ComponentProps, useState } from 'react';
import { act, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { renderInTestApp } from '@backstage/test-utils';
import { ResponseError } from '@backstage/errors';
import {
  SnapshotSettings,
  StatefulSetOrphans,
} from 'backstage-plugin-pvc-pruner-common';
import { PruneDialog } from './PruneDialog';
import { GiB, makeOrphan, makeStatefulSet } from '../../__testUtils__/fixtures';
import { formatTime } from '../../utils/format';
import { startDryRun } from '../../__testUtils__/pruneControls';

const sts = makeStatefulSet('db', {
  orphans: [
    makeOrphan('db', 2),
    makeOrphan('db', 3, {
      capacityBytes: 5 * GiB,
      volume: {
        name: 'pv-keep',
        reclaimPolicy: 'Retain',
        phase: 'Bound',
        retained: true,
      },
    }),
  ],
});

/** The dialog for sts in cluster prod, open, as the section opens it. */
function renderDialog(options: {
  dryRun: boolean;
  onConfirm: ComponentProps<typeof PruneDialog>['onConfirm'];
  statefulSet?: StatefulSetOrphans;
  snapshots?: SnapshotSettings;
}) {
  return renderInTestApp(
    <PruneDialog
      open
      cluster="prod"
      statefulSet={sts}
      onClose={jest.fn()}
      {...options}
    />,
  );
}

describe('PruneDialog', () => {
  it('lists exactly what will be sent, and enables a real prune only once the name is typed', async () => {
    const onConfirm = jest.fn().mockResolvedValue(undefined);
    await renderDialog({ dryRun: false, onConfirm });
    const dialog = screen.getByRole('dialog');
    expect(within(dialog).getByText('data-db-2 — 10 GiB')).toBeInTheDocument();
    expect(within(dialog).getByText('data-db-3 — 5 GiB')).toBeInTheDocument();
    expect(
      within(dialog).getByText(
        /Retain: the disk pv-keep survives and is still billed/,
      ),
    ).toBeInTheDocument();
    expect(
      within(dialog).getByText(
        /Will delete 2 claims \(15 GiB\); 5 GiB of it stays on Retain volumes/,
      ),
    ).toBeInTheDocument();

    const confirm = within(dialog).getByRole('button', {
      name: 'Delete 2 claims',
    });
    expect(confirm).toBeDisabled();
    const input = within(dialog).getByRole('textbox', {
      name: 'Type the StatefulSet name db to confirm',
    });
    await userEvent.type(input, 'd');
    expect(confirm).toBeDisabled();
    await userEvent.type(input, 'b');
    expect(confirm).toBeEnabled();

    // Leave out data-db-3: only data-db-2 is sent.
    await userEvent.click(
      within(dialog).getByRole('checkbox', { name: /data-db-3/ }),
    );
    expect(
      within(dialog).getByText(/Will delete 1 claim \(10 GiB\)/),
    ).toBeInTheDocument();
    await userEvent.click(
      within(dialog).getByRole('button', { name: 'Delete 1 claim' }),
    );
    expect(onConfirm).toHaveBeenCalledWith([sts.orphans[0]], {});
  });

  it('warns that chosen claims kept from automatic pruning are deleted anyway, saying who keeps them and why', async () => {
    const keptAt = '2026-12-01T09:00:00.000Z';
    const withKeeps = makeStatefulSet('db', {
      orphans: [
        makeOrphan('db', 2, {
          keep: {
            source: 'card',
            keptBy: 'user:default/ann',
            keptAt,
            reason: 'holds the March export',
          },
        }),
        makeOrphan('db', 3, { keep: { source: 'annotation' } }),
        makeOrphan('db', 4),
      ],
    });
    await renderDialog({
      dryRun: false,
      onConfirm: jest.fn(),
      statefulSet: withKeeps,
    });
    const dialog = screen.getByRole('dialog');
    const warning = within(dialog).getByText(/kept from automatic pruning/)
      .parentElement!;
    expect(warning).toHaveTextContent(
      '2 of these claims are kept from automatic pruning; pruning deletes them anyway:',
    );
    expect(warning).toHaveTextContent(
      `data-db-2: kept by user:default/ann on ${formatTime(
        keptAt,
      )}: holds the March export`,
    );
    expect(warning).toHaveTextContent(
      'data-db-3: kept by its pvc-pruner.backstage.io/keep annotation',
    );
    expect(warning).not.toHaveTextContent('data-db-4');

    // Unticking the kept claims removes the warning.
    await userEvent.click(
      within(dialog).getByRole('checkbox', { name: /data-db-2/ }),
    );
    await userEvent.click(
      within(dialog).getByRole('checkbox', { name: /data-db-3/ }),
    );
    expect(
      within(dialog).queryByText(/kept from automatic pruning/),
    ).not.toBeInTheDocument();
  });

  it('needs no name for a dry run', async () => {
    const onConfirm = jest.fn().mockResolvedValue(undefined);
    await renderDialog({ dryRun: true, onConfirm });
    expect(screen.queryByRole('textbox')).not.toBeInTheDocument();
    await startDryRun();
    expect(onConfirm).toHaveBeenCalledWith(sts.orphans, {});
  });

  it('shows why the backend refused, and stays open', async () => {
    const onConfirm = jest
      .fn()
      .mockRejectedValue(
        new Error('StatefulSet shop/db is being pruned by user:default/ann'),
      );
    await renderDialog({ dryRun: true, onConfirm });
    await startDryRun();
    expect(
      await screen.findByText(/being pruned by user:default\/ann/),
    ).toBeInTheDocument();
    expect(screen.getByRole('dialog')).toBeInTheDocument();
  });

  it('says why a prune was not started when too many run (429), in the backend’s words, as a warning, and stays open', async () => {
    const message =
      'You have 10 prune jobs running, dry runs included (the limit is 10); wait for one to finish';
    const tooMany = await ResponseError.fromResponse(
      new Response(
        JSON.stringify({
          error: { name: 'TooManyRequestsError', message },
          response: { statusCode: 429 },
        }),
        {
          status: 429,
          statusText: 'Too Many Requests',
          headers: { 'Content-Type': 'application/json' },
        },
      ),
    );
    await renderDialog({
      dryRun: true,
      onConfirm: jest.fn().mockRejectedValue(tooMany),
    });
    await startDryRun();

    const alert = await screen.findByRole('alert');
    expect(alert).toHaveTextContent(`Not started: ${message}`);
    expect(alert.className).toMatch(/Warning/);
    expect(screen.getByRole('dialog')).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Start dry run' })).toBeEnabled();
  });

  it('keeps the typed name and the selection when the card re-scans while it is open', async () => {
    const onConfirm = jest.fn().mockResolvedValue(undefined);
    // The card's periodic re-scan: equal content, new objects.
    let rescan = () => {};
    const Rescanning = () => {
      const [scanned, setScanned] = useState(sts);
      rescan = () =>
        setScanned({ ...sts, orphans: sts.orphans.map(o => ({ ...o })) });
      return (
        <PruneDialog
          open
          dryRun={false}
          cluster="prod"
          statefulSet={scanned}
          onClose={jest.fn()}
          onConfirm={onConfirm}
        />
      );
    };
    await renderInTestApp(<Rescanning />);
    const dialog = screen.getByRole('dialog');
    await userEvent.click(
      within(dialog).getByRole('checkbox', { name: /data-db-3/ }),
    );
    await userEvent.type(
      within(dialog).getByRole('textbox', {
        name: 'Type the StatefulSet name db to confirm',
      }),
      'db',
    );
    act(() => rescan());
    expect(within(dialog).getByRole('textbox')).toHaveValue('db');
    await userEvent.click(
      within(dialog).getByRole('button', { name: 'Delete 1 claim' }),
    );
    expect(onConfirm).toHaveBeenCalledWith(
      [expect.objectContaining({ name: 'data-db-2' })],
      {},
    );
  });

  describe('with snapshots enabled', () => {
    const enabled: SnapshotSettings = {
      enabled: true,
      retentionDays: 7,
      required: true,
    };
    const noClass =
      'no VolumeSnapshotClass is marked default for CSI driver pd.csi.storage.gke.io (annotate one snapshot.storage.kubernetes.io/is-default-class: "true", or map StorageClass standard in pvcPruner.snapshots.storageClasses)';
    const snapshotting = makeStatefulSet('db', {
      orphans: [
        makeOrphan('db', 2, {
          snapshotPlan: { kind: 'class', volumeSnapshotClass: 'csi-snapshots' },
        }),
        makeOrphan('db', 3, {
          volume: {
            name: 'pv-keep',
            reclaimPolicy: 'Retain',
            phase: 'Bound',
            retained: true,
          },
          snapshotPlan: {
            kind: 'not-needed',
            reason:
              'its volume pv-keep is kept when the claim is deleted (reclaim policy Retain), so it needs no snapshot',
          },
        }),
        makeOrphan('db', 4, {
          snapshotPlan: { kind: 'none', reason: noClass },
        }),
      ],
    });

    it('offers a snapshot, on by default, says per claim what it does, names the claims without a class, and sends snapshot: true', async () => {
      const onConfirm = jest.fn().mockResolvedValue(undefined);
      await renderDialog({
        dryRun: false,
        onConfirm,
        statefulSet: snapshotting,
        snapshots: enabled,
      });
      const dialog = within(screen.getByRole('dialog'));
      const keep = dialog.getByRole('checkbox', {
        name: 'Keep a snapshot for 7 days',
      });
      expect(keep).toBeChecked();
      expect(
        dialog.getByText(
          /Snapshot with VolumeSnapshotClass csi-snapshots, deleted once it is ready/,
        ),
      ).toBeInTheDocument();
      expect(
        dialog.getByText(
          /No snapshot needed: the volume itself survives \(Retain\)/,
        ),
      ).toBeInTheDocument();
      expect(
        dialog.getByText(
          `No VolumeSnapshotClass, so it is not deleted: ${noClass}.`,
          { exact: false },
        ),
      ).toBeInTheDocument();
      expect(dialog.getByRole('alert')).toHaveTextContent(
        '1 claim cannot be snapshotted and will not be deleted: data-db-4.',
      );
      // The count is what the job will delete, not what is sent.
      expect(dialog.getByRole('status')).toHaveTextContent(
        /^Will delete 2 claims \(.*\).*; 1 claim kept for want of a snapshot\.$/,
      );

      await userEvent.type(dialog.getByRole('textbox'), 'db');
      await userEvent.click(
        dialog.getByRole('button', { name: 'Delete 3 claims' }),
      );
      expect(onConfirm).toHaveBeenCalledWith(snapshotting.orphans, {
        snapshot: true,
      });
    });

    it('sends snapshot: false once unticked, and then says nothing of classes', async () => {
      const onConfirm = jest.fn().mockResolvedValue(undefined);
      await renderDialog({
        dryRun: true,
        onConfirm,
        statefulSet: snapshotting,
        snapshots: enabled,
      });
      const dialog = within(screen.getByRole('dialog'));
      await userEvent.click(
        dialog.getByRole('checkbox', { name: 'Keep a snapshot for 7 days' }),
      );
      expect(dialog.queryByText(/VolumeSnapshotClass/)).not.toBeInTheDocument();
      expect(
        dialog.getByText(/their data cannot be brought back/),
      ).toBeInTheDocument();
      await startDryRun();
      expect(onConfirm).toHaveBeenCalledWith(snapshotting.orphans, {
        snapshot: false,
      });
    });

    it('is off by default when no selected claim has a class, and says a class-less claim is deleted without one when snapshots are not required', async () => {
      const onConfirm = jest.fn().mockResolvedValue(undefined);
      await renderDialog({
        dryRun: true,
        onConfirm,
        statefulSet: snapshotting,
        snapshots: { ...enabled, required: false },
      });
      const dialog = within(screen.getByRole('dialog'));
      const keep = dialog.getByRole('checkbox', {
        name: 'Keep a snapshot for 7 days',
      });
      // Leave out the one claim that has a class.
      await userEvent.click(
        dialog.getByRole('checkbox', { name: /data-db-2/ }),
      );
      expect(keep).not.toBeChecked();

      await userEvent.click(keep);
      expect(
        dialog.getByText(
          /so it is deleted without a snapshot: no VolumeSnapshotClass is marked default/,
        ),
      ).toBeInTheDocument();
      expect(dialog.queryByRole('alert')).not.toBeInTheDocument();
      await startDryRun();
      expect(onConfirm).toHaveBeenCalledWith(
        [snapshotting.orphans[1], snapshotting.orphans[2]],
        { snapshot: true },
      );
    });

    it('does not offer snapshots while they are disabled, and sends no snapshot field', async () => {
      const onConfirm = jest.fn().mockResolvedValue(undefined);
      await renderDialog({
        dryRun: true,
        onConfirm,
        statefulSet: snapshotting,
        snapshots: { enabled: false },
      });
      expect(
        screen.queryByRole('checkbox', { name: /Keep a snapshot/ }),
      ).not.toBeInTheDocument();
      expect(screen.queryByText(/VolumeSnapshotClass/)).not.toBeInTheDocument();
      await startDryRun();
      expect(onConfirm).toHaveBeenCalledWith(snapshotting.orphans, {});
    });
  });
});
