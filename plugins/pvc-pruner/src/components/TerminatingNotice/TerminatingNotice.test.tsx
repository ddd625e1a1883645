import { render, screen } from '@testing-library/react';
import { TerminatingNotice } from './TerminatingNotice';

describe('TerminatingNotice', () => {
  it('names each claim still terminating and what holds it, and says it is not offered again', () => {
    render(
      <TerminatingNotice
        statefulSet={{
          kept: [
            {
              name: 'data-db-3',
              uid: 'u3',
              template: 'data',
              ordinal: 3,
              reason: 'terminating',
              finalizers: ['acc.example/backup-hold'],
            },
            {
              name: 'data-db-backup',
              uid: 'u9',
              template: 'data',
              reason: 'not-an-ordinal',
            },
          ],
        }}
      />,
    );
    const notice = screen.getByRole('status');
    expect(notice).toHaveTextContent('1 claim still terminating, not deleted');
    expect(notice).toHaveTextContent(
      'data-db-3 (held by acc.example/backup-hold).',
    );
    expect(notice).toHaveTextContent('neither offered for pruning');
    expect(notice).not.toHaveTextContent('data-db-backup');
  });

  it('shows nothing when no claim is terminating', () => {
    const { container } = render(
      <TerminatingNotice statefulSet={{ kept: [] }} />,
    );
    expect(container).toBeEmptyDOMElement();
  });
});
