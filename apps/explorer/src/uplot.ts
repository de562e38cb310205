/** uPlot, loaded (with its stylesheet) the first time a screen draws a chart. */
export interface UPlotInstance {
  setData(data: Array<Array<number | null>>): void;
  setScale(key: string, limits: { min: number; max: number }): void;
  data: Array<Array<number | null>>;
  setSize(size: { width: number; height: number }): void;
  destroy(): void;
}
export type UPlotConstructor = new (options: Record<string, unknown>, data: Array<Array<number | null>>, target: HTMLElement) => UPlotInstance;

let uplotLoading: Promise<UPlotConstructor> | null = null;

export function loadUPlot(): Promise<UPlotConstructor> {
  if (!uplotLoading) {
    if (!document.querySelector('link[data-uplot]')) {
      const link = document.createElement('link');
      link.rel = 'stylesheet';
      link.href = './vendor/uplot.css';
      link.dataset.uplot = '';
      document.head.append(link);
    }
    uplotLoading = import('uplot').then((module) => (module as unknown as { default: UPlotConstructor }).default);
    uplotLoading.catch(() => { uplotLoading = null; });
  }
  return uplotLoading;
}
