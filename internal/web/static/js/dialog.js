// Modal dialogs on the native <dialog>: showModal() makes the rest of the
// page inert and traps focus, Escape fires `cancel`. We add the parts it
// leaves out: a first focus, focus back on the opener, and busy states.

import { h } from './dom.js';

function open({ title, describedBy, body, actions, form, onCancel, className }) {
  const opener = document.activeElement;
  const id = 'dlg-' + Math.random().toString(36).slice(2);
  const heading = h('h2', { id: id + '-t', class: 'dialog-title' }, title);
  const errorBox = h('p', { class: 'dialog-error', role: 'alert', hidden: true });
  const inner = h(form ? 'form' : 'div', { class: 'dialog-body', novalidate: form || undefined },
    heading, body, errorBox, h('div', { class: 'dialog-actions' }, actions));
  const dlg = h('dialog', { class: 'dialog ' + (className || ''), 'aria-labelledby': id + '-t', 'aria-describedby': describedBy }, inner);
  let busy = false;
  dlg.addEventListener('cancel', (e) => {
    // Escape while a request is in flight would hide its outcome.
    if (busy) { e.preventDefault(); return; }
    onCancel?.();
  });
  dlg.addEventListener('close', () => {
    dlg.remove();
    if (opener && opener.isConnected && typeof opener.focus === 'function') opener.focus();
  });
  // A stale error next to a corrected field reads as a new failure.
  inner.addEventListener('input', () => { errorBox.hidden = true; });
  document.body.append(dlg);
  dlg.showModal();
  const first = dlg.querySelector('[autofocus]') || dlg.querySelector('input, textarea, select, button');
  first?.focus();
  return {
    dlg,
    form: form ? inner : null,
    close: () => dlg.close(),
    setBusy(on) {
      busy = on;
      dlg.classList.toggle('busy', on);
      for (const b of dlg.querySelectorAll('.dialog-actions button')) b.disabled = on;
      dlg.setAttribute('aria-busy', on ? 'true' : 'false');
    },
    showError(msg) {
      errorBox.textContent = msg || '';
      errorBox.hidden = !msg;
    },
  };
}

// confirm asks a yes/no question; `run` does the work and may throw an
// error that is shown inside the dialog. Resolves true once run succeeded.
export function confirmAction({ title, message, confirmLabel, danger = true, run }) {
  return new Promise((resolve) => {
    const msgId = 'm-' + Math.random().toString(36).slice(2);
    const cancel = h('button', { type: 'button', class: 'btn', autofocus: true, onclick: () => { resolve(false); d.close(); } }, 'Cancel');
    const ok = h('button', { type: 'button', class: danger ? 'btn btn-danger' : 'btn btn-primary' }, confirmLabel);
    const d = open({
      title,
      describedBy: msgId,
      body: h('div', { id: msgId, class: 'dialog-message' }, message),
      actions: [cancel, ok],
      onCancel: () => resolve(false),
      className: 'dialog-confirm',
    });
    ok.addEventListener('click', async () => {
      d.setBusy(true);
      d.showError('');
      try {
        await run();
        resolve(true);
        d.setBusy(false);
        d.close();
      } catch (e) {
        d.setBusy(false);
        d.showError(e.message);
        ok.focus();
      }
    });
  });
}

// formDialog shows fields in a form; submit calls `submit(form)`, which
// returns the result or throws an error that is shown in the dialog.
export function formDialog({ title, fields, submitLabel, submit }) {
  return new Promise((resolve) => {
    const cancel = h('button', { type: 'button', class: 'btn', onclick: () => { resolve(null); d.close(); } }, 'Cancel');
    const ok = h('button', { type: 'submit', class: 'btn btn-primary' }, submitLabel);
    const d = open({ title, body: h('div', { class: 'fields' }, fields), actions: [cancel, ok], form: true, onCancel: () => resolve(null) });
    d.form.addEventListener('submit', async (e) => {
      e.preventDefault();
      d.showError('');
      d.setBusy(true);
      try {
        const result = await submit(d.form);
        resolve(result);
        d.setBusy(false);
        d.close();
      } catch (err) {
        d.setBusy(false);
        d.showError(err.message);
        const bad = d.form.querySelector('[aria-invalid="true"]');
        (bad || ok).focus();
      }
    });
  });
}

// field builds a labelled control with a hint and an error slot.
export function field({ label, control, hint }) {
  const id = control.id || (control.id = 'f-' + Math.random().toString(36).slice(2));
  const hintEl = hint ? h('p', { class: 'hint', id: id + '-h' }, hint) : null;
  if (hintEl) control.setAttribute('aria-describedby', id + '-h');
  return h('div', { class: 'field' }, h('label', { for: id }, label), control, hintEl);
}

// invalid marks a control and throws the message for the dialog to show.
export function invalid(control, message) {
  control.setAttribute('aria-invalid', 'true');
  control.addEventListener('input', () => control.removeAttribute('aria-invalid'), { once: true });
  throw new Error(message);
}
