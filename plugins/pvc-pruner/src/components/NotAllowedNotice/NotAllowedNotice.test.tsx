import { render, screen } from '@testing-library/react';
import { NotAllowedNotice } from './NotAllowedNotice';

describe('NotAllowedNotice', () => {
  it('names the permission and the entity', () => {
    render(<NotAllowedNotice entityRef="component:default/shop" />);
    expect(
      screen.getByText(
        /pvc-pruner.orphans.read permission on component:default\/shop/,
      ),
    ).toBeInTheDocument();
  });
});
