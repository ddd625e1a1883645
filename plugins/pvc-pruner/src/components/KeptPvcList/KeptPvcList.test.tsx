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

  it('renders nothing when every claim is an orphan', () => {
    const { container } = renderKept({});
    expect(container).toBeEmptyDOMElement();
  });
});
