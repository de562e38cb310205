/**
 * A modal confirmation (a native <dialog> shown with showModal, so focus and Escape behave): a
 * title, a body, a danger button and Cancel. The action runs while the dialog shows "Working…";
 * its error is shown in the dialog (role="alert") and the dialog stays open.
 */
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { html } from '../../html.js';
import { errorText } from '../../api.js';

export interface ConfirmProps {
  title: string;
  children?: ComponentChildren;
  /** The confirming button's text, e.g. "Delete 3". */
  confirmLabel: string;
  /** false: the confirm button is disabled (say nothing to delete). */
  canConfirm?: boolean;
  onConfirm: () => Promise<void> | void;
  onClose: () => void;
}

let nextId = 0;

export function ConfirmDialog({ title, children, confirmLabel, canConfirm = true, onConfirm, onClose }: ConfirmProps) {
  const ref = useRef<HTMLDialogElement>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const [id] = useState(() => `confirm-${++nextId}`);
  useEffect(() => {
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
    return () => { if (dialog?.open) dialog.close(); };
  }, []);
  const confirm = async () => {
    setBusy(true);
    setError('');
    try {
      await onConfirm();
      onClose();
    } catch (e) {
      setError(errorText(e));
      setBusy(false);
    }
  };
  return html`
    <dialog ref=${ref} class="ops-dialog" aria-labelledby=${id} onCancel=${(event: Event) => { event.preventDefault(); if (!busy) onClose(); }}>
      <h2 id=${id}>${title}</h2>
      <div class="ops-dialog-body">${children}</div>
      ${error ? html`<p class="error" role="alert">${error}</p>` : null}
      <div class="row ops-dialog-buttons">
        <button type="button" onClick=${onClose} disabled=${busy}>Cancel</button>
        <button type="button" class="danger" onClick=${() => { void confirm(); }} disabled=${busy || !canConfirm}>${busy ? 'Working…' : confirmLabel}</button>
      </div>
    </dialog>`;
}
