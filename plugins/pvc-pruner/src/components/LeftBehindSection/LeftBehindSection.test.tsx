import { useState } from 'react';
import { act, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import {
  LeftBehindGroup,
  LeftBehindResponse,
} from 'backstage-plugin-pvc-pruner-common';
import { ActiveJobsProvider } from '../../hooks/ActiveJobsContext';
import { useActiveJobs } from '../../hooks/useActiveJobs';
import { FakePvcPrunerApi } from '../../__testUtils__/FakePvcPrunerApi';
import { makeOrphan, makeStatefulSet } from '../../__testUtils__/fixtures';
import { renderWithApis } from '../../__testUtils__/renderWithApis';
import { pruneButton } from '../../__testUtils__/pruneControls';
import { LeftBehindSection, shortDate } from './LeftBehindSection';

const ORDERS = 'component:default/orders';

const deleted: LeftBehindGroup = {
  namespace: 'shop',
  statefulSet: { name: 'orders-db', uid: 'deleted-uid' },
  evidence: 'lineage',
  lastSeenAt: '2026-12-03T10:00:00.000Z',
  claimants: [ORDERS],
  report: makeStatefulSet('orders-db', {
    replicas: 0,
    orphans: [makeOrphan('orders-db', 0), makeOrphan('orders-db', 1)],
  }),
};

const guessed: LeftBehindGroup = {
  namespace: 'shop',
  statefulSet: { name: 'old-ledger' },
  evidence: 'name-and-labels',
  claimants: [ORDERS],
  nameEvidence: {
    template: 'data',
    labels: { 'backstage.io/kubernetes-id': 'orders' },
    otherParses: [{ template: 'data-old', statefulSet: 'ledger' }],
  },
  report: makeStatefulSet('old-ledger', {
    replicas: 0,
    orphans: [makeOrphan('old-ledger', 0)],
  }),
};

function response(
  groups: LeftBehindGroup[],
  extra: object = {},
): LeftBehindResponse {
  return {
    entityRef: ORDERS,
    clusters: [{ cluster: 'prod', ok: true, groups, ...extra }],
  };
}

/** Lets a test answer the card's next reload of the list. */
let reloadWith: (next: LeftBehindResponse) => void = () => {};

function Harness(props: { leftBehind: LeftBehindResponse }) {
  const { jobs, start, finish, dismiss } = useActiveJobs([]);
  const [leftBehind, setLeftBehind] = useState(props.leftBehind);
  reloadWith = setLeftBehind;
  return (
    <ActiveJobsProvider
      value={{ jobs, started: start, finished: finish, dismissed: dismiss }}
    >
      <LeftBehindSection entityRef={ORDERS} leftBehind={leftBehind} />
    </ActiveJobsProvider>
  );
}

describe('LeftBehindSection', () => {
  it('shows each deleted StatefulSet in its own section, with when it was last seen and its claims', async () => {
    await renderWithApis(<Harness leftBehind={response([deleted])} />, {
      api: new FakePvcPrunerApi(),
    });
    const section = screen.getByRole('region', {
      name: 'StatefulSet shop/orders-db',
    });
    expect(
      within(section).getByText(
        `Left by StatefulSet orders-db, deleted; last seen ${shortDate(
          deleted.lastSeenAt!,
        )}`,
      ),
    ).toBeInTheDocument();
    expect(within(section).getByText('data-orders-db-0')).toBeInTheDocument();
    expect(within(section).getByText('data-orders-db-1')).toBeInTheDocument();
    // No scale-up warning: nothing scales a deleted StatefulSet up.
    expect(
      within(section).queryByText('Scaling up brings old data back'),
    ).not.toBeInTheDocument();
  });

  it('says which recorded claimant left the catalog, and that pruning then needs pvc-pruner.unowned.prune', async () => {
    const renamed = {
      ...deleted,
      claimants: ['component:default/ledger-old', ORDERS],
      claimantsNotInCatalog: ['component:default/ledger-old'],
    };
    await renderWithApis(<Harness leftBehind={response([renamed])} />, {
      api: new FakePvcPrunerApi(),
    });
    const section = screen.getByRole('region', {
      name: 'StatefulSet shop/orders-db',
    });
    expect(section).toHaveTextContent(
      'Recorded as claimed by component:default/ledger-old (no longer in the catalog: removed, renamed, or Kubernetes annotations dropped). That name gives nobody a right to these claims: pruning them needs pvc-pruner.unowned.prune.',
    );
    expect(section).not.toHaveTextContent(/Also claimed by/);
  });

  it('states each unverified recorded claimant once, unlinked, with why and what pruning needs: gone from the catalog, or registered again (or recorded before uids)', async () => {
    const LEDGER = 'component:default/ledger';
    const GONE = 'component:default/ledger-old';
    const notice =
      'recorded owner component:default/ledger, component:default/ledger-old no longer exists (or was re-created); a platform team with pvc-pruner.unowned.prune may prune it';
    await renderWithApis(
      <Harness
        leftBehind={response([
          {
            ...deleted,
            claimants: [LEDGER, GONE, ORDERS],
            claimantsNotInCatalog: [GONE],
            unverifiedClaimants: [LEDGER, GONE],
            ownerNotice: notice,
          },
        ])}
      />,
      { api: new FakePvcPrunerApi() },
    );
    const section = screen.getByRole('region', {
      name: 'StatefulSet shop/orders-db',
    });
    expect(section).toHaveTextContent(
      'Recorded as claimed by component:default/ledger (registered again under that name since, or recorded before pvc-pruner kept entity uids); component:default/ledger-old (no longer in the catalog: removed, renamed, or Kubernetes annotations dropped). Those names give nobody a right to these claims: pruning them needs pvc-pruner.unowned.prune.',
    );
    // One statement: not the server's notice again, and neither is linked or listed as a claimant.
    expect(section).not.toHaveTextContent(/no longer exists/);
    expect(section).not.toHaveTextContent(/Also claimed by/);
    expect(
      within(section).queryByRole('link', { name: /ledger/ }),
    ).not.toBeInTheDocument();
    expect(within(section).getAllByText(LEDGER)).toHaveLength(1);
  });

  it('prunes through the card’s dialog, naming the deleted StatefulSet', async () => {
    const api = new FakePvcPrunerApi();
    await renderWithApis(<Harness leftBehind={response([deleted])} />, {
      api,
    });
    await userEvent.click(pruneButton('orders-db'));
    const dialog = screen.getByRole('dialog');
    await userEvent.type(
      within(dialog).getByRole('textbox', {
        name: 'Type the StatefulSet name orders-db to confirm',
      }),
      'orders-db',
    );
    await userEvent.click(
      within(dialog).getByRole('button', { name: 'Delete 2 claims' }),
    );
    expect(api.started).toEqual([
      expect.objectContaining({
        entityRef: ORDERS,
        statefulSet: 'orders-db',
        pvcs: [
          { name: 'data-orders-db-0', uid: 'uid-data-orders-db-0' },
          { name: 'data-orders-db-1', uid: 'uid-data-orders-db-1' },
        ],
        leftBy: { evidence: 'lineage', statefulSetUid: 'deleted-uid' },
      }),
    ]);
  });

  it('keeps a pruned group on the card, without its claims, while its prune’s progress and outcome are shown, until they are closed', async () => {
    const api = new FakePvcPrunerApi();
    await renderWithApis(<Harness leftBehind={response([deleted])} />, {
      api,
    });
    await userEvent.click(pruneButton('orders-db'));
    const dialog = screen.getByRole('dialog');
    await userEvent.type(
      within(dialog).getByRole('textbox', {
        name: 'Type the StatefulSet name orders-db to confirm',
      }),
      'orders-db',
    );
    await userEvent.click(
      within(dialog).getByRole('button', { name: 'Delete 2 claims' }),
    );
    // The card reloads the list once the claims are gone: the group is no longer in it.
    act(() => reloadWith(response([])));
    const section = screen.getByRole('region', {
      name: 'StatefulSet shop/orders-db',
    });
    expect(
      within(section).getByRole('region', {
        name: 'Prune of shop/orders-db progress',
      }),
    ).toBeInTheDocument();
    // Its claims are no longer offered: only the prune's progress lists them.
    expect(
      within(section).getByText('No orphaned claims.'),
    ).toBeInTheDocument();
  });

  it('names the evidence of claims with no lineage, and prunes them only once each name is typed', async () => {
    const api = new FakePvcPrunerApi();
    await renderWithApis(<Harness leftBehind={response([guessed])} />, {
      api,
    });
    expect(
      screen.getByText(/Probably left by a deleted StatefulSet/),
    ).toHaveTextContent('Probably left by a deleted StatefulSet old-ledger');
    expect(
      screen.getByText(/backstage.io\/kubernetes-id=orders/),
    ).toBeInTheDocument();
    expect(screen.getByText(/data-old of ledger/)).toBeInTheDocument();

    await userEvent.click(pruneButton('old-ledger'));
    const dialog = screen.getByRole('dialog');
    await userEvent.type(
      within(dialog).getByRole('textbox', {
        name: 'Type the StatefulSet name old-ledger to confirm',
      }),
      'old-ledger',
    );
    const confirm = within(dialog).getByRole('button', {
      name: 'Delete 1 claim',
    });
    expect(confirm).toBeDisabled();
    await userEvent.type(
      within(dialog).getByRole('textbox', {
        name: 'Type the claim name data-old-ledger-0 to confirm',
      }),
      'data-old-ledger-0',
    );
    expect(confirm).toBeEnabled();
    await userEvent.click(confirm);
    expect(api.started[0].leftBy).toEqual({
      evidence: 'name-and-labels',
      typedNames: ['data-old-ledger-0'],
    });
  });

  it('says how many groups are withheld, and shows nothing when nothing was left', async () => {
    const region = () =>
      screen.queryByRole('region', { name: 'Claims of deleted StatefulSets' });
    const first = await renderWithApis(<Harness leftBehind={response([])} />, {
      api: new FakePvcPrunerApi(),
    });
    expect(region()).not.toBeInTheDocument();
    first.unmount();
    await renderWithApis(
      <Harness
        leftBehind={response([], {
          withheld: {
            statefulSets: 1,
            refusedClaimants: ['component:default/payments'],
          },
        })}
      />,
      { api: new FakePvcPrunerApi() },
    );
    expect(region()).toHaveTextContent(/1 StatefulSet/);
  });
});
