import { render, screen } from '@testing-library/react';
import { JobStatusLabel } from './JobStatusLabel';

describe('JobStatusLabel', () => {
  it.each([
    ['succeeded', 'Succeeded'],
    ['incomplete', 'Incomplete'],
    ['aborted', 'Aborted'],
    ['interrupted', 'Interrupted'],
  ] as const)('shows %s as the word %s', (status, text) => {
    render(<JobStatusLabel status={status} />);
    expect(screen.getByText(text)).toBeInTheDocument();
  });
});
