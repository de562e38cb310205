/** The height of a scrolling element, followed as it resizes (the live tail's and the tree's row windows). */
import { useEffect, useState } from 'preact/hooks';

export function useViewportHeight(viewport: { readonly current: HTMLDivElement | null }, initial: number): number {
  const [height, setHeight] = useState(initial);
  useEffect(() => {
    const element = viewport.current;
    if (!element) return;
    const observer = new ResizeObserver(() => setHeight(element.clientHeight));
    observer.observe(element);
    setHeight(element.clientHeight);
    return () => observer.disconnect();
  }, []);
  return height;
}
