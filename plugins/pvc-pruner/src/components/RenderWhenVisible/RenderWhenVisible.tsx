import { ReactNode, useEffect, useRef, useState } from 'react';

/** Props of {@link RenderWhenVisible}. */
export interface RenderWhenVisibleProps {
  /** The space held until the children render, so the page does not jump. */
  placeholderHeight: number;
  /** How far outside the viewport rendering starts; default 600px. */
  margin?: number;
  children: ReactNode;
}

/**
 * Renders its children once they come near the viewport, and keeps them
 * rendered. Many large tables then cost only what is on screen. Without
 * IntersectionObserver (tests, old browsers) it renders at once.
 */
export function RenderWhenVisible(props: RenderWhenVisibleProps) {
  const { placeholderHeight, margin = 600, children } = props;
  const ref = useRef<HTMLDivElement>(null);
  const [visible, setVisible] = useState(
    () => typeof IntersectionObserver === 'undefined',
  );

  useEffect(() => {
    if (visible || !ref.current) return undefined;
    const observer = new IntersectionObserver(
      entries => {
        if (entries.some(e => e.isIntersecting)) setVisible(true);
      },
      { rootMargin: `${margin}px 0px` },
    );
    observer.observe(ref.current);
    return () => observer.disconnect();
  }, [visible, margin]);

  if (visible) return <>{children}</>;
  return (
    <div ref={ref} style={{ minHeight: placeholderHeight }} aria-busy="true" />
  );
}
