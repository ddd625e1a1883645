import { render, screen } from '@testing-library/react';
import { StatefulSetHeader } from './StatefulSetHeader';
import { makeStatefulSet } from '../../__testUtils__/fixtures';

describe('StatefulSetHeader', () => {
  it('names the StatefulSet, its ordinals and its retention policy', () => {
    render(
      <StatefulSetHeader
        statefulSet={makeStatefulSet('db', { replicas: 2 })}
      />,
    );
    expect(screen.getByText('shop/db')).toBeInTheDocument();
    expect(screen.getByText(/runs ordinals 0–1/)).toBeInTheDocument();
    expect(screen.getByText(/20 GiB reclaimable/)).toBeInTheDocument();
    expect(
      screen.getByText(/only acts on\s+future scale-downs/),
    ).toBeInTheDocument();
  });

  it('says when the StatefulSet runs no pods', () => {
    render(
      <StatefulSetHeader
        statefulSet={makeStatefulSet('db', { replicas: 0 })}
      />,
    );
    expect(screen.getByText(/runs no pods/)).toBeInTheDocument();
  });
});
