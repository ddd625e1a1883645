import { ComponentProps, useState } from 'react';
import { act, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { renderInTestApp } from '@backstage/test-utils';
import { ResponseError } from '@backstage/errors';
import { PruneDialog } from './PruneDialog';
import { GiB, makeOrphan, makeStatefulSet } from '../../__testUtils__/fixtures';
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
    expect(onConfirm).toHaveBeenCalledWith([sts.orphans[0]]);
  });

  it('needs no name for a dry run', async () => {
    const onConfirm = jest.fn().mockResolvedValue(undefined);
    await renderDialog({ dryRun: true, onConfirm });
    expect(screen.queryByRole('textbox')).not.toBeInTheDocument();
    await startDryRun();
    expect(onConfirm).toHaveBeenCalledWith(sts.orphans);
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
    expect(onConfirm).toHaveBeenCalledWith([
      expect.objectContaining({ name: 'data-db-2' }),
    ]);
  });
});
