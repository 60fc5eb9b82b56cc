// The deliberate in-between states: loading, empty, error.

import { h } from './dom.js';

export function loading(text) {
  return h('div', { class: 'state state-loading', role: 'status' }, h('span', { class: 'spinner', 'aria-hidden': 'true' }), text);
}

export function empty(title, text, action) {
  return h('div', { class: 'state state-empty' },
    h('div', { class: 'state-art', 'aria-hidden': 'true' }),
    h('h2', {}, title), text ? h('p', {}, text) : null, action || null);
}

// failure shows an API error; `retry` re-runs the failed step.
export function failure(title, err, retry) {
  return h('div', { class: 'state state-error', role: 'alert' },
    h('h2', {}, title),
    h('p', { class: 'error-text' }, err.message),
    err.type ? h('p', { class: 'error-type' }, err.type) : null,
    retry ? h('button', { type: 'button', class: 'btn', onclick: retry }, 'Try again') : null);
}
