// The API token control. It appears once the daemon has refused a request
// for want of a token (or when one is already set), so deployments
// without auth never see it.

import * as api from './api.js';
import { h, announce } from './dom.js';
import { field, formDialog } from './dialog.js';

export function tokenButton() {
  const btn = h('button', { type: 'button', class: 'btn btn-small token-btn', id: 'token-btn', hidden: !api.getToken() });
  const label = () => { btn.textContent = api.getToken() ? 'API token set' : 'Enter API token'; };
  label();
  btn.addEventListener('click', async () => {
    const input = h('input', { type: 'password', name: 'token', autocomplete: 'off', value: api.getToken(), autofocus: true });
    const saved = await formDialog({
      title: 'API token',
      submitLabel: 'Save',
      fields: [field({ label: 'Bearer token', control: input, hint: 'This reportd requires a token to change data. It is kept in this tab only. Leave empty to forget it.' })],
      submit: async () => ({ token: input.value.trim() }),
    });
    if (!saved) return;
    api.setToken(saved.token);
    label();
    announce(saved.token ? 'Token saved for this tab.' : 'Token forgotten.');
  });
  window.addEventListener('reportd:unauthorized', () => {
    btn.hidden = false;
    btn.classList.add('attention');
    label();
  });
  return btn;
}
