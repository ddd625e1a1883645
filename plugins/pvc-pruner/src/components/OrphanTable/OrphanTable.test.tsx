import { screen } from '@testing-library/react';
import { renderInTestApp } from '@backstage/test-utils';
import { OrphanTable } from './OrphanTable';
import { makeOrphan } from '../../__testUtils__/fixtures';

describe('OrphanTable', () => {
  it('shows each orphan’s storage, volume, age and hazard', async () => {
    await renderInTestApp(
      <OrphanTable
        statefulSet="db"
        orphans={[
          makeOrphan('db', 2, {
            storageClassName: 'fast-ssd',
            volume: {
              name: 'pv-9',
              reclaimPolicy: 'Retain',
              phase: 'Bound',
              retained: true,
            },
          }),
        ]}
      />,
    );
    expect(screen.getByText('data-db-2')).toBeInTheDocument();
    expect(screen.getByText('10 GiB')).toBeInTheDocument();
    expect(screen.getByText('fast-ssd')).toBeInTheDocument();
    expect(screen.getByText('pv-9')).toBeInTheDocument();
    expect(
      screen.getByText('Retain: the disk survives pruning and is still billed'),
    ).toBeInTheDocument();
    expect(screen.getByText('Bound · 3d')).toBeInTheDocument();
    expect(
      screen.getByText(
        /At ≥ 3 replicas, reattached to pod db-2 with its old data/,
      ),
    ).toBeInTheDocument();
  });

  it('pages long lists', async () => {
    const orphans = Array.from({ length: 100 }, (_, i) =>
      makeOrphan('db', i + 2),
    );
    await renderInTestApp(<OrphanTable statefulSet="db" orphans={orphans} />);
    expect(screen.getByText('100 orphaned claims')).toBeInTheDocument();
    expect(screen.getByText('data-db-11')).toBeInTheDocument();
    expect(screen.queryByText('data-db-12')).not.toBeInTheDocument();
  });
});
