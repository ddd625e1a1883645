import { screen } from '@testing-library/react';
import { ClusterSection, ClusterSectionProps } from './ClusterSection';
import { FakePvcPrunerApi } from '../../__testUtils__/FakePvcPrunerApi';
import { makeStatefulSet } from '../../__testUtils__/fixtures';
import { NoActiveJobs } from '../../__testUtils__/NoActiveJobs';
import { renderWithApis } from '../../__testUtils__/renderWithApis';

/** A cluster section of a card that follows no prune. */
function Section(props: ClusterSectionProps) {
  return (
    <NoActiveJobs>
      <ClusterSection {...props} />
    </NoActiveJobs>
  );
}

/** Renders the section of `cluster` for entity shop. */
function renderSection(cluster: ClusterSectionProps['cluster']) {
  return renderWithApis(
    <Section entityRef="component:default/shop" cluster={cluster} />,
    { api: new FakePvcPrunerApi() },
  );
}

describe('ClusterSection', () => {
  it('shows a cluster error as an alert', async () => {
    await renderSection({
      cluster: 'eu',
      ok: false,
      error: {
        name: 'ClusterRequestError',
        message: 'Unauthorized',
        statusCode: 401,
      },
    });
    expect(screen.getByRole('alert')).toHaveTextContent(
      'Could not read cluster eu (HTTP 401)',
    );
    expect(screen.getByRole('alert')).toHaveTextContent(
      'ClusterRequestError: Unauthorized',
    );
  });

  it('lists each StatefulSet', async () => {
    await renderSection({
      cluster: 'eu',
      ok: true,
      statefulSets: [makeStatefulSet('db'), makeStatefulSet('cache')],
    });
    expect(
      screen.getByRole('region', { name: 'StatefulSet shop/db' }),
    ).toBeInTheDocument();
    expect(
      screen.getByRole('region', { name: 'StatefulSet shop/cache' }),
    ).toBeInTheDocument();
  });

  it('says when the entity has no StatefulSets there', async () => {
    await renderSection({ cluster: 'eu', ok: true, statefulSets: [] });
    expect(
      screen.getByText('This entity has no StatefulSets in this cluster.'),
    ).toBeInTheDocument();
  });

  it('says that StatefulSets are withheld, and not that there are none, when all of them are', async () => {
    await renderSection({
      cluster: 'eu',
      ok: true,
      statefulSets: [],
      withheld: {
        statefulSets: 2,
        refusedClaimants: ['component:default/ledger'],
      },
    });
    expect(screen.getByRole('status')).toHaveTextContent(
      "2 StatefulSets that this entity's annotations match are not shown: they are also claimed by component:default/ledger, whose claims you may not view.",
    );
    expect(
      screen.queryByText('This entity has no StatefulSets in this cluster.'),
    ).not.toBeInTheDocument();
  });

  it("says how old the data may be when the backend's watch is disconnected for more than a few seconds", async () => {
    const stale = (secondsSinceSync: number) =>
      renderSection({
        cluster: 'eu',
        ok: true,
        statefulSets: [makeStatefulSet('db')],
        staleness: {
          secondsSinceSync,
          disconnectedWatches: ['persistentvolumeclaims', 'pods'],
        },
      });
    const { unmount } = await stale(42);
    expect(screen.getByRole('status')).toHaveTextContent(
      'Cluster data may be 42 s old: the watch on persistentvolumeclaims, pods disconnected.',
    );
    unmount();

    await stale(2);
    expect(screen.queryByText(/may be 2 s old/)).not.toBeInTheDocument();
    expect(
      screen.getByRole('region', { name: 'StatefulSet shop/db' }),
    ).toBeInTheDocument();
  });
});
