import { render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { KeptPvcList } from './KeptPvcList';

describe('KeptPvcList', () => {
  it('shows why claims are kept when opened', async () => {
    render(
      <KeptPvcList
        statefulSet={{
          name: 'db',
          ordinals: { start: 0, end: 3 },
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
        }}
      />,
    );
    expect(
      screen.queryByText('mounted by pod db-3 (terminating)'),
    ).not.toBeInTheDocument();
    await userEvent.click(screen.getByRole('button', { name: /1 claim kept/ }));
    expect(
      screen.getByText('mounted by pod db-3 (terminating)'),
    ).toBeInTheDocument();
  });

  it('renders nothing when every claim is an orphan', () => {
    const { container } = render(
      <KeptPvcList
        statefulSet={{ name: 'db', ordinals: { start: 0, end: 3 }, kept: [] }}
      />,
    );
    expect(container).toBeEmptyDOMElement();
  });
});
