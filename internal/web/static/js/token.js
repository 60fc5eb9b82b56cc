// The API token control. It appears once the daemon has refused a request
// for want of a token (or when one is already set), so deployments
// without auth never see it. A refusal for want of a token (401) opens the
// prompt by itself when no other dialog is open; a token that lacks a
// scope (403) shows the daemon's message, which names the scope needed.

import * as api from './api.js';
import { h, announce } from './dom.js';
import { field, formDialog } from './dialog.js';

let prompting = false;

// promptToken asks for a token; once saved, the current page reloads its
// data (the 'reportd:token' event).
export async function promptToken(reason) {
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
        hint: (reason ? reason + ' ' : '') + 'This reportd requires a token (rpt_…) for this. It is kept in this tab only. Leave empty to forget it.',
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
    if (!document.querySelector('dialog[open]')) promptToken(e.detail?.message);
  });
  window.addEventListener('reportd:forbidden', () => {
    btn.hidden = false;
    btn.classList.add('attention');
    label();
  });
  return btn;
}
