import { screen } from '@testing-library/react';
import { WithheldNotice } from './WithheldNotice';
import { FakePvcPrunerApi } from '../../__testUtils__/FakePvcPrunerApi';
import { renderWithApis } from '../../__testUtils__/renderWithApis';

const render = (
  statefulSets: number,
  refusedClaimants: string[],
  overClaimed?: number,
) =>
  renderWithApis(
    <WithheldNotice
      withheld={{
        statefulSets,
        refusedClaimants,
        ...(overClaimed ? { overClaimed } : {}),
      }}
    />,
    { api: new FakePvcPrunerApi() },
  );

describe('WithheldNotice', () => {
  it('says how many StatefulSets are not shown and which claimant refused, linked to it', async () => {
    await render(1, ['component:default/ledger']);
    const notice = screen.getByRole('status');
    expect(screen.getByText('1 StatefulSet not shown')).toBeInTheDocument();
    expect(notice).toHaveTextContent(
      "1 StatefulSet that this entity's annotations match is not shown: it is also claimed by component:default/ledger, whose claims you may not view. If this entity should not claim it, narrow its Kubernetes annotations.",
    );
    expect(
      screen.getByRole('link', { name: 'component:default/ledger' }),
    ).toHaveAttribute('href', '/catalog/default/component/ledger/kubernetes');
  });

  it('speaks in the plural, and lists several refused claimants', async () => {
    await render(3, ['component:default/ledger', 'component:payments/vault']);
    expect(screen.getByRole('status')).toHaveTextContent(
      "3 StatefulSets that this entity's annotations match are not shown: they are also claimed by entities whose claims you may not view: component:default/ledger and component:payments/vault. If this entity should not claim them, narrow its Kubernetes annotations.",
    );
    expect(screen.getAllByRole('link')).toHaveLength(2);
  });

  it('says when StatefulSets are withheld because too many entities claim them, a catalog error', async () => {
    await render(2, ['component:default/ledger'], 1);
    expect(screen.getByRole('status')).toHaveTextContent(
      "2 StatefulSets that this entity's annotations match are not shown: they are also claimed by component:default/ledger, whose claims you may not view. 1 of them is claimed by more than 20 catalog entities, which pvc-pruner takes as an error in the catalog: shown to nobody, and pruned by nobody, until those entities' Kubernetes annotations are narrowed. If this entity should not claim them, narrow its Kubernetes annotations.",
    );
  });
});
