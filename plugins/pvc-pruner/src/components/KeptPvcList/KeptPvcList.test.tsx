import { render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { KeptPvcList, KeptPvcListProps } from './KeptPvcList';

type Naming = KeptPvcListProps['statefulSet'];

/** Renders the kept claims of StatefulSet db (ordinals 0–2 unless told), none unless given. */
function renderKept(statefulSet: Partial<Naming>) {
  return render(
    <KeptPvcList
      statefulSet={{
        name: 'db',
        ordinals: { start: 0, end: 3 },
        inUse: [],
        kept: [],
        ...statefulSet,
      }}
    />,
  );
}

describe('KeptPvcList', () => {
  it('shows why claims are kept when opened', async () => {
    renderKept({
      kept: [
        {
          name: 'data-db-3',
          uid: 'u3',
          template: 'data',
          ordinal: 3,
          reason: 'mounted-by-pod',
          pods: [{ name: 'db-3', terminating: true }],
        },
      ],
    });
    expect(
      screen.queryByText('mounted by pod db-3 (terminating)'),
    ).not.toBeInTheDocument();
    await userEvent.click(screen.getByRole('button', { name: /1 claim kept/ }));
    expect(
      screen.getByText('mounted by pod db-3 (terminating)'),
    ).toBeInTheDocument();
  });

  it('counts the claims of running ordinals and names them per template, in short when there are many', async () => {
    renderKept({
      ordinals: { start: 0, end: 40 },
      inUse: [
        { template: 'data', ordinals: [...Array(40).keys()] },
        { template: 'logs', ordinals: [0, 2] },
      ],
    });
    await userEvent.click(
      screen.getByRole('button', { name: /42 claims kept/ }),
    );
    expect(
      screen.getByText('data-db-0 … data-db-39 (40 claims)'),
    ).toBeInTheDocument();
    expect(
      screen.getByText('ordinals 0–39 are ones the StatefulSet runs (0–39)'),
    ).toBeInTheDocument();
    expect(screen.getByText('logs-db-0, logs-db-2')).toBeInTheDocument();
    expect(
      screen.getByText('ordinals 0, 2 are ones the StatefulSet runs (0–39)'),
    ).toBeInTheDocument();
  });

  it('still lists kept claims from a backend that sends no inUse (an older replica mid-deploy)', async () => {
    render(
      <KeptPvcList
        statefulSet={
          {
            name: 'db',
            ordinals: { start: 0, end: 3 },
            kept: [
              {
                name: 'data-db-backup',
                uid: 'ub',
                template: 'data',
                reason: 'not-an-ordinal',
              },
            ],
          } as unknown as KeptPvcListProps['statefulSet']
        }
      />,
    );
    await userEvent.click(screen.getByRole('button', { name: /1 claim kept/ }));
    expect(screen.getByText('data-db-backup')).toBeInTheDocument();
  });

  it('says once why the claims of a paused StatefulSet are kept, per template, however many there are', async () => {
    const claimsOf = (template: string, count: number) =>
      [...Array(count).keys()].map(ordinal => ({
        name: `${template}-db-${ordinal}`,
        uid: `${template}-${ordinal}`,
        template,
        ordinal,
        reason: 'paused' as const,
      }));
    renderKept({
      ordinals: { start: 0, end: 0 },
      kept: [...claimsOf('data', 50), ...claimsOf('wal', 2)].sort(
        (a, b) => a.ordinal - b.ordinal,
      ),
    });
    await userEvent.click(
      screen.getByRole('button', { name: /52 claims kept/ }),
    );
    expect(
      screen.getByText('data-db-0 … data-db-49 (50 claims)'),
    ).toBeInTheDocument();
    expect(screen.getByText('wal-db-0, wal-db-1')).toBeInTheDocument();
    expect(
      screen.getAllByText(
        'db is scaled to 0 replicas (paused), and scaling it up again reattaches its claims, data and all',
      ),
    ).toHaveLength(2);
  });

  it("groups the claims inside an autoscaler's range, and keeps claims kept for different reasons apart", async () => {
    renderKept({
      ordinals: { start: 0, end: 2 },
      kept: [
        ...[2, 3, 4, 5].map(ordinal => ({
          name: `data-db-${ordinal}`,
          uid: `u${ordinal}`,
          template: 'data',
          ordinal,
          reason: 'autoscaler-range' as const,
          autoscaler: { name: 'db-hpa', maxReplicas: 6 },
        })),
        {
          name: 'data-db-6',
          uid: 'u6',
          template: 'data',
          ordinal: 6,
          reason: 'mounted-by-pod',
          pods: [{ name: 'debug', terminating: false }],
        },
      ],
    });
    await userEvent.click(
      screen.getByRole('button', { name: /5 claims kept/ }),
    );
    expect(
      screen.getByText('data-db-2 … data-db-5 (4 claims)'),
    ).toBeInTheDocument();
    expect(
      screen.getByText(
        'HorizontalPodAutoscaler db-hpa may scale db up to 6 replicas, which reattaches the claims of ordinals below 6',
      ),
    ).toBeInTheDocument();
    expect(screen.getByText('data-db-6')).toBeInTheDocument();
    expect(screen.getByText('mounted by pod debug')).toBeInTheDocument();
  });

  it('renders nothing when every claim is an orphan', () => {
    const { container } = renderKept({});
    expect(container).toBeEmptyDOMElement();
  });
});
