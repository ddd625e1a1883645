import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { OrphanedVolumes } from './OrphanedVolumes';
import { FakePvcPrunerApi } from '../../__testUtils__/FakePvcPrunerApi';
import {
  makeOrphan,
  makeResponse,
  makeStatefulSet,
} from '../../__testUtils__/fixtures';
import { renderWithApis } from '../../__testUtils__/renderWithApis';

describe('OrphanedVolumes', () => {
  it('reloads on Refresh', async () => {
    const api = new FakePvcPrunerApi();
    let calls = 0;
    api.orphans = async () => {
      calls += 1;
      const orphans = calls === 1 ? [makeOrphan('db', 2)] : [];
      return makeResponse([
        {
          cluster: 'prod',
          ok: true,
          statefulSets: [makeStatefulSet('db', { orphans })],
        },
      ]);
    };
    await renderWithApis(
      <OrphanedVolumes
        entityRef="component:default/shop"
        title="Orphaned volumes"
      />,
      { api },
    );
    expect(await screen.findByText('data-db-2')).toBeInTheDocument();
    await userEvent.click(screen.getByRole('button', { name: 'Refresh' }));
    expect(await screen.findByText('Nothing to prune')).toBeInTheDocument();
  });

  it('shows an error panel when the backend fails', async () => {
    const api = new FakePvcPrunerApi();
    api.orphans = async () => {
      throw new Error(
        'Entity component:default/shop has no Kubernetes annotations',
      );
    };
    await renderWithApis(
      <OrphanedVolumes
        entityRef="component:default/shop"
        title="Orphaned volumes"
      />,
      { api },
    );
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
    const response = makeResponse([
      { cluster: 'prod', ok: true, statefulSets },
    ]);
    api.orphans = async () => response;
    await renderWithApis(
      <OrphanedVolumes
        entityRef="component:default/shop"
        title="Orphaned volumes"
      />,
      { api },
    );
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
