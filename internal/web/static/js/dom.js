// Tiny DOM builder. Everything the API returns reaches the page as text
// nodes or attribute values through here, never as HTML.

export function h(tag, props, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') el.className = v;
    else if (k === 'text') el.textContent = v;
    else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k in el && typeof v !== 'string') el[k] = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

export function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

export function clear(el) {
  while (el.firstChild) el.firstChild.remove();
  return el;
}

// A visually hidden label for screen readers.
export function sr(text) {
  return h('span', { class: 'sr-only' }, text);
}

let liveTimer;
// announce shows a short message in the toast and has it read out by the
// live region. The two are separate: a live region must stay in the
// accessibility tree to be heard, while the toast comes and goes.
export function announce(text, kind = 'ok') {
  const live = document.getElementById('live');
  const toast = document.getElementById('toast');
  if (live) live.textContent = text;
  if (!toast) return;
  toast.textContent = text;
  toast.className = 'toast show toast-' + kind;
  clearTimeout(liveTimer);
  liveTimer = setTimeout(() => { toast.className = 'toast'; }, 5000);
}
