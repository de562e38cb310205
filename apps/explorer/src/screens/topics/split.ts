/**
 * The divider between a tab and the message detail: drag it (or focus it and press ←/→) to give
 * the detail more or less of the width. The width is kept in localStorage for the next detail.
 */
import { useState } from 'preact/hooks';
import { html } from '../../html.js';

const STORAGE_KEY = 'engine.explorer.detailWidth';
const MIN_DETAIL = 300;
/** Room the tab keeps beside the detail. */
const MIN_TAB = 260;
const KEY_STEP = 32;

function storedWidth(): number {
  const value = Number(localStorage.getItem(STORAGE_KEY));
  return Number.isFinite(value) && value >= MIN_DETAIL ? value : 420;
}

/** The detail's width in px, and its setter that clamps to the container and keeps the value. */
export function useDetailWidth(): [number, (width: number, containerWidth: number) => void] {
  const [width, setWidth] = useState(storedWidth);
  const set = (next: number, containerWidth: number): void => {
    const clamped = Math.round(Math.max(MIN_DETAIL, Math.min(next, containerWidth - MIN_TAB)));
    localStorage.setItem(STORAGE_KEY, String(clamped));
    setWidth(clamped);
  };
  return [width, set];
}

export function Splitter(props: { width: number; onResize: (width: number, containerWidth: number) => void }) {
  const container = (element: HTMLElement): HTMLElement => element.parentElement!;
  const onPointerDown = (event: PointerEvent): void => {
    const handle = event.currentTarget as HTMLElement;
    handle.setPointerCapture(event.pointerId);
    event.preventDefault();
    const startX = event.clientX;
    const startWidth = props.width;
    const move = (moved: PointerEvent): void => {
      props.onResize(startWidth + startX - moved.clientX, container(handle).getBoundingClientRect().width);
    };
    const up = (): void => {
      handle.removeEventListener('pointermove', move);
      handle.removeEventListener('pointerup', up);
      handle.removeEventListener('pointercancel', up);
    };
    handle.addEventListener('pointermove', move);
    handle.addEventListener('pointerup', up);
    handle.addEventListener('pointercancel', up);
  };
  const onKeyDown = (event: KeyboardEvent): void => {
    if (event.key !== 'ArrowLeft' && event.key !== 'ArrowRight') return;
    event.preventDefault();
    event.stopPropagation();
    const box = container(event.currentTarget as HTMLElement).getBoundingClientRect();
    props.onResize(props.width + (event.key === 'ArrowLeft' ? KEY_STEP : -KEY_STEP), box.width);
  };
  return html`<div class="detail-splitter" role="separator" aria-orientation="vertical" aria-label="Resize the message detail"
    aria-valuenow=${props.width} aria-valuemin=${MIN_DETAIL} tabindex="0" title="Drag to resize (or ←/→)"
    onPointerDown=${onPointerDown} onKeyDown=${onKeyDown}></div>`;
}
