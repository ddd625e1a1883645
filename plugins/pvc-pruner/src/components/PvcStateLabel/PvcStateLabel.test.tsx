import { render, screen } from '@testing-library/react';
import { PvcStateLabel } from './PvcStateLabel';

describe('PvcStateLabel', () => {
  it('tells the state in words', () => {
    render(<PvcStateLabel state="deleted" />);
    expect(screen.getByText('Deleted')).toBeInTheDocument();
  });

  it('says what a dry run would do', () => {
    render(<PvcStateLabel state="deleted" dryRun />);
    expect(screen.getByText('Would be deleted')).toBeInTheDocument();
  });
});
