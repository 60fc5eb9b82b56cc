// A report compared with another of the same name: the change in each
// figure, the tests that newly fail, were fixed, still fail or are flaky,
// and the files whose coverage dropped (GET /api/reports/{id}/compare).
// The reader picks the base: the previous report on the same branch, the
// newest on another branch, or one report.

import * as api from './api.js';
import { h } from './dom.js';
import { formatTime } from './format.js';

const FIELDS = [['lines', 'Coverage', '%'], ['passed', 'Passed', ''], ['failed', 'Failed', ''], ['skipped', 'Skipped', ''], ['flaky', 'Flaky', '']];

const num = (v, unit) => (typeof v === 'number' ? `${Math.round(v * 100) / 100}${unit}` : '–');
function signed(v, unit) {
  if (typeof v !== 'number') return '–';
  const r = Math.round(v * 100) / 100;
  return r > 0 ? `+${r}${unit === '%' ? ' pp' : ''}` : r < 0 ? `−${-r}${unit === '%' ? ' pp' : ''}` : '±0';
}

function baseLabel(p) {
  const bits = [`report ${p.reportId}`];
  if (p.branch) bits.push(`on ${p.branch}`);
  if (p.commit) bits.push(`at ${p.commit.slice(0, 12)}`);
  bits.push(`uploaded ${formatTime(p.uploadTime)}`);
  return bits.join(' ');
}

function testList(title, cls, tests) {
  if (!tests?.length) return null;
  return h('div', { class: `compare-list ${cls}` },
    h('h3', {}, `${title} (${tests.length})`),
    h('ul', {}, tests.map((t) => h('li', {}, t.title || t.id))));
}

function body(c) {
  if (!c.base) return h('p', { class: 'muted' }, 'No earlier report of this name to compare with.');
  const rows = FIELDS.filter(([k]) => typeof c.head.summary?.[k] === 'number' || typeof c.base.summary?.[k] === 'number')
    .map(([k, label, unit]) => h('tr', {},
      h('th', { scope: 'row' }, label),
      h('td', {}, num(c.base.summary?.[k], unit)),
      h('td', {}, num(c.head.summary?.[k], unit)),
      h('td', { class: 'compare-delta' }, signed(c.delta?.[k], unit))));
  return h('div', {},
    h('p', { class: 'compare-base' }, 'Compared with ', h('a', { href: `#/reports/${c.base.reportId}` }, baseLabel(c.base)), '.'),
    rows.length ? h('table', { class: 'compare-table' },
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Figure'), h('th', { scope: 'col' }, 'Base'), h('th', { scope: 'col' }, 'This report'), h('th', { scope: 'col' }, 'Change'))),
      h('tbody', {}, rows)) : null,
    testList('New failures', 'compare-new', c.newFailures),
    testList('Fixed', 'compare-fixed', c.fixed),
    testList('Still failing', 'compare-still', c.stillFailing),
    testList('Flaky', 'compare-flaky', c.flaky),
    c.files?.length ? h('div', { class: 'compare-list compare-files' },
      h('h3', {}, `Coverage dropped (${c.files.length})`),
      h('ul', {}, c.files.map((f) => h('li', {}, h('code', {}, f.path), ` ${num(f.before, '%')} → ${num(f.after, '%')}`)))) : null);
}

// compareSection is the report page's "Compared with …" panel for r,
// given the project's reports (for the base picker).
export function compareSection(r, reports) {
  const same = reports.filter((x) => x.name === r.name && x.fileType === r.fileType && x.id !== r.id);
  const branches = [...new Set(same.map((x) => x.branch).filter((b) => b && b !== r.branch))].sort();
  const sel = h('select', { id: 'compare-base', name: 'base' },
    h('option', { value: 'previous' }, r.branch ? `Previous on ${r.branch}` : 'Previous report'),
    ...branches.map((b) => h('option', { value: `branch:${b}` }, `Newest on ${b}`)),
    ...same.filter((x) => x.id < r.id).sort((a, b) => b.id - a.id).slice(0, 50)
      .map((x) => h('option', { value: String(x.id) }, `Report ${x.id}${x.branch ? ` (${x.branch})` : ''}, ${formatTime(x.uploadTime)}`)));
  const out = h('div', { class: 'compare-body', 'aria-live': 'polite' });
  let seq = 0;
  async function load() {
    const mine = ++seq;
    out.setAttribute('aria-busy', 'true');
    try {
      const c = await api.compareReport(r.id, sel.value);
      if (mine === seq) out.replaceChildren(body(c));
    } catch (e) {
      if (mine === seq) out.replaceChildren(h('p', { class: 'error-text' }, `Could not compare: ${e.message}`));
    } finally {
      if (mine === seq) out.removeAttribute('aria-busy');
    }
  }
  sel.addEventListener('change', load);
  load();
  // Folded like the stable links above it; open, since it is the news.
  return h('details', { class: 'compare', id: 'compare', open: true },
    h('summary', {}, 'Compared with …'),
    h('div', { class: 'compare-head' },
      h('label', { class: 'filter', for: 'compare-base' }, h('span', { class: 'filter-label' }, 'Base'), sel)),
    out);
}
