import { act, render, screen } from '@testing-library/react';
import { RenderWhenVisible } from './RenderWhenVisible';

describe('RenderWhenVisible', () => {
  afterEach(() => {
    delete (globalThis as { IntersectionObserver?: unknown })
      .IntersectionObserver;
  });

  it('renders at once without IntersectionObserver', () => {
    render(
      <RenderWhenVisible placeholderHeight={100}>content</RenderWhenVisible>,
    );
    expect(screen.getByText('content')).toBeInTheDocument();
  });

  it('renders once the placeholder comes into view', () => {
    let callback: (
      entries: Array<{ isIntersecting: boolean }>,
    ) => void = () => {};
    (
      globalThis as { IntersectionObserver?: unknown }
    ).IntersectionObserver = class {
      constructor(cb: typeof callback) {
        callback = cb;
      }
      observe() {}
      disconnect() {}
    };
    render(
      <RenderWhenVisible placeholderHeight={100}>content</RenderWhenVisible>,
    );
    expect(screen.queryByText('content')).not.toBeInTheDocument();
    act(() => callback([{ isIntersecting: true }]));
    expect(screen.getByText('content')).toBeInTheDocument();
  });
});
