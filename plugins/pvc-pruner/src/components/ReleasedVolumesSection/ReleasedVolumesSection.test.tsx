import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { ReleasedVolumesSection } from './ReleasedVolumesSection';
import { FakePvcPrunerApi } from '../../__testUtils__/FakePvcPrunerApi';
import { makeReleasedVolume } from '../../__testUtils__/fixtures';
import { renderWithApis } from '../../__testUtils__/renderWithApis';

const entityPath = (ref: string) => `/catalog/${ref}`;

describe('ReleasedVolumesSection, on the fleet page', () => {
  it('lists every Released volume with size, class, cost, since when, claim and entity, and reclaims one', async () => {
    const api = new FakePvcPrunerApi();
    api.releasedVolumes = async () => ({
      items: [
        makeReleasedVolume(2),
        makeReleasedVolume(7, {
          entityRef: undefined,
          claimants: [],
          statefulSet: undefined,
          canReclaim: false,
          reason:
            'no catalog entity can be traced to it: reclaiming it needs pvc-pruner.unowned.prune',
        }),
      ],
      truncated: false,
      totals: { volumes: 2, bytes: 200 * 2 ** 30, monthlyCost: 34 },
      errors: [],
    });
    await renderWithApis(
      <ReleasedVolumesSection currency="USD" entityPath={entityPath} />,
      { api },
    );

    const table = await screen.findByRole('table', {
      name: 'Released volumes',
    });
    expect(screen.getByText(/still billed until reclaimed/).textContent).toBe(
      '2 Released volumes · 200 GiB ($34.00 a month) still billed until reclaimed',
    );
    const [, owned, unowned] = within(table).getAllByRole('row');
    expect(owned).toHaveTextContent('pvc-2');
    expect(owned).toHaveTextContent('100 GiB');
    expect(owned).toHaveTextContent('premium-retain');
    expect(owned).toHaveTextContent('$17.00 a month');
    expect(owned).toHaveTextContent('search/data-search-index-2');
    expect(owned).toHaveTextContent('of StatefulSet search-index');
    expect(
      within(owned).getByRole('link', { name: 'search' }),
    ).toBeInTheDocument();
    expect(unowned).toHaveTextContent('Unowned');
    expect(unowned).toHaveTextContent('needs pvc-pruner.unowned.prune');
    expect(within(unowned).queryByRole('button')).not.toBeInTheDocument();

    await userEvent.click(
      within(owned).getByRole('button', { name: 'Reclaim pvc-2' }),
    );
    await userEvent.click(
      within(screen.getByRole('dialog')).getByRole('button', {
        name: 'Reclaim 100 GiB',
      }),
    );
    expect(api.reclaims).toEqual([
      expect.objectContaining({
        cluster: 'demo',
        namespace: 'search',
        entityRef: 'component:default/search',
        dryRun: false,
        volumes: [
          expect.objectContaining({ name: 'pvc-2', claimUid: 'claim-uid-2' }),
        ],
      }),
    ]);
  });

  it('falls to nothing once the volumes are reclaimed', async () => {
    const api = new FakePvcPrunerApi();
    await renderWithApis(
      <ReleasedVolumesSection currency="USD" entityPath={entityPath} />,
      { api },
    );
    expect(await screen.findByText('None.')).toBeInTheDocument();
    expect(screen.getByText(/still billed until reclaimed/).textContent).toBe(
      '0 Released volumes · 0 B still billed until reclaimed',
    );
  });
});
