// The API token control. It appears once the daemon has refused a request
// for want of a token (or when one is already set), so deployments
// without auth never see it. A refusal for want of a token (401) opens the
// prompt by itself when no other dialog is open; a token that lacks a
// scope (403) shows the daemon's message, which names the scope needed.

import * as api from './api.js';
import { h, announce } from './dom.js';
import { field, formDialog } from './dialog.js';

let prompting = false;

// why says why this daemon asks for a token: a change was refused (any
// token on the daemon makes changes need one, reads stay open), or a read
// was (auth.reads). Without a refusal (the button), both cases.
function why(reason, write) {
  // The daemon's "a valid bearer token is required: …" goes on to tell an
  // API client which header to send; here its first clause is enough.
  const said = reason ? reason.replace(/^(a valid bearer token is required):.*$/s, '$1.') + ' ' : '';
  if (reason && write) {
    return said + 'Changes on this reportd (uploading, editing, deleting) need a token since one was set up for it ' +
      '(reportd token create or auth.token). Viewing reports does not need one.';
  }
  if (reason) {
    return said + 'This reportd asks for a token to view reports too (its administrator set auth.reads).';
  }
  return 'Changes on this reportd (uploading, editing, deleting) need a token once one has been set up for it; ' +
    'viewing reports needs one only where its administrator set auth.reads.';
}

// promptToken asks for a token; once saved, the current page reloads its
// data (the 'reportd:token' event).
export async function promptToken(reason, write = false) {
  if (prompting) return;
  prompting = true;
  try {
    const input = h('input', { type: 'password', name: 'token', autocomplete: 'off', value: api.getToken(), autofocus: true });
    const saved = await formDialog({
      title: 'API token',
      submitLabel: 'Save',
      fields: [field({
        label: 'Bearer token',
        control: input,
        hint: why(reason, write) + ' Paste a token (rpt_…) from its administrator: it is kept in this tab only. Leave empty to forget it.',
      })],
      submit: async () => ({ token: input.value.trim() }),
    });
    if (!saved) return;
    api.setToken(saved.token);
    announce(saved.token ? 'Token saved for this tab.' : 'Token forgotten.');
    window.dispatchEvent(new CustomEvent('reportd:token'));
  } finally {
    prompting = false;
  }
}

export function tokenButton() {
  const btn = h('button', { type: 'button', class: 'btn btn-small token-btn', id: 'token-btn', hidden: !api.getToken() });
  const label = () => { btn.textContent = api.getToken() ? 'API token set' : 'Enter API token'; };
  label();
  btn.addEventListener('click', () => promptToken());
  window.addEventListener('reportd:token', label);
  window.addEventListener('reportd:unauthorized', (e) => {
    btn.hidden = false;
    btn.classList.add('attention');
    label();
    // Not over another dialog: its own error line already says why.
    if (!document.querySelector('dialog[open]')) promptToken(e.detail?.message, e.detail?.write);
  });
  window.addEventListener('reportd:forbidden', () => {
    btn.hidden = false;
    btn.classList.add('attention');
    label();
  });
  return btn;
}
