import { screen } from '@testing-library/react';
import { ClusterSection } from './ClusterSection';
import { FakePvcPrunerApi } from '../../__testUtils__/FakePvcPrunerApi';
import { makeStatefulSet } from '../../__testUtils__/fixtures';
import { renderWithApis } from '../../__testUtils__/renderWithApis';

const callbacks = {
  onJobStarted: jest.fn(),
  onJobFinished: jest.fn(),
  onJobDismissed: jest.fn(),
};

describe('ClusterSection', () => {
  it('shows a cluster error as an alert', async () => {
    await renderWithApis(
      <ClusterSection
        entityRef="component:default/shop"
        cluster={{
          cluster: 'eu',
          ok: false,
          error: {
            name: 'ClusterRequestError',
            message: 'Unauthorized',
            statusCode: 401,
          },
        }}
        jobs={{}}
        {...callbacks}
      />,
      { api: new FakePvcPrunerApi() },
    );
    expect(screen.getByRole('alert')).toHaveTextContent(
      'Could not read cluster eu (HTTP 401)',
    );
    expect(screen.getByRole('alert')).toHaveTextContent(
      'ClusterRequestError: Unauthorized',
    );
  });

  it('lists each StatefulSet', async () => {
    await renderWithApis(
      <ClusterSection
        entityRef="component:default/shop"
        cluster={{
          cluster: 'eu',
          ok: true,
          statefulSets: [makeStatefulSet('db'), makeStatefulSet('cache')],
        }}
        jobs={{}}
        {...callbacks}
      />,
      { api: new FakePvcPrunerApi() },
    );
    expect(
      screen.getByRole('region', { name: 'StatefulSet shop/db' }),
    ).toBeInTheDocument();
    expect(
      screen.getByRole('region', { name: 'StatefulSet shop/cache' }),
    ).toBeInTheDocument();
  });

  it('says when the entity has no StatefulSets there', async () => {
    await renderWithApis(
      <ClusterSection
        entityRef="component:default/shop"
        cluster={{ cluster: 'eu', ok: true, statefulSets: [] }}
        jobs={{}}
        {...callbacks}
      />,
      { api: new FakePvcPrunerApi() },
    );
    expect(
      screen.getByText('This entity has no StatefulSets in this cluster.'),
    ).toBeInTheDocument();
  });

  it("says how old the data may be when the backend's watch is disconnected for more than a few seconds", async () => {
    const stale = (secondsSinceSync: number) => (
      <ClusterSection
        entityRef="component:default/shop"
        cluster={{
          cluster: 'eu',
          ok: true,
          statefulSets: [makeStatefulSet('db')],
          staleness: {
            secondsSinceSync,
            disconnectedWatches: ['persistentvolumeclaims', 'pods'],
          },
        }}
        jobs={{}}
        {...callbacks}
      />
    );
    const { unmount } = await renderWithApis(stale(42), {
      api: new FakePvcPrunerApi(),
    });
    expect(screen.getByRole('status')).toHaveTextContent(
      'Cluster data may be 42 s old: the watch on persistentvolumeclaims, pods disconnected.',
    );
    unmount();

    await renderWithApis(stale(2), { api: new FakePvcPrunerApi() });
    expect(screen.queryByText(/may be 2 s old/)).not.toBeInTheDocument();
    expect(
      screen.getByRole('region', { name: 'StatefulSet shop/db' }),
    ).toBeInTheDocument();
  });
});
