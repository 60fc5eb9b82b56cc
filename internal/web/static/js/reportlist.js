// A project's reports, newest first, with rename and delete.

import * as api from './api.js';
import { h, announce } from './dom.js';
import { confirmAction, field, formDialog, invalid } from './dialog.js';
import { formatSize, formatTime, plural } from './format.js';
import { TYPES, typeOf } from './types.js';

// typeIcon is a small document glyph labelled with the type.
export function typeIcon(type) {
  const t = TYPES[type] || { label: '?', name: 'file' };
  return h('span', { class: `ficon ficon-${type}`, role: 'img', 'aria-label': t.name }, t.label);
}

function rename(r) {
  const name = h('input', { type: 'text', name: 'fileName', value: r.fileName, autocomplete: 'off', autofocus: true, spellcheck: 'false' });
  const done = formDialog({
    title: 'Rename report',
    submitLabel: 'Rename',
    // A site's name is only a label (its files keep theirs): any name.
    fields: [field({ label: 'File name', control: name, hint: r.kind === 'site' ? 'The name the site is listed and downloaded under.' : `Keep the .${r.fileType} extension: the type of a report does not change.` })],
    async submit() {
      const n = name.value.trim();
      if (!n) invalid(name, 'The file name cannot be empty.');
      if (/[\\/]/.test(n)) invalid(name, 'A file name cannot contain / or \\.');
      if (r.kind !== 'site' && typeOf(n) !== r.fileType) invalid(name, `The name must end in .${r.fileType}.`);
      if (n === r.fileName) return r;
      return api.renameReport(r.id, n);
    },
  });
  // Select the part before the extension, as file managers do.
  const dot = r.fileName.lastIndexOf('.');
  if (dot > 0) name.setSelectionRange(0, dot);
  return done;
}

function remove(r) {
  return confirmAction({
    title: 'Delete report',
    message: h('p', {}, `Delete “${r.fileName}”? Its file and PDF go with it. This cannot be undone.`),
    confirmLabel: 'Delete report',
    run: () => api.deleteReport(r.id),
  });
}

// buildMeta is the line of build metadata under a report's name: its
// stable name, branch, short commit and a link to the CI build.
function buildMeta(r) {
  const parts = [h('span', { class: 'meta-name', title: 'Report name' }, r.name || '')];
  if (r.branch) parts.push(h('span', { class: 'meta-branch', title: 'Branch' }, r.branch));
  if (r.commit) parts.push(h('code', { class: 'meta-commit', title: r.commit }, r.commit.slice(0, 12)));
  if (r.buildUrl && /^https?:\/\//i.test(r.buildUrl)) {
    parts.push(h('a', { class: 'meta-build', href: r.buildUrl, target: '_blank', rel: 'noopener noreferrer' }, r.buildId ? `Build #${r.buildId}` : 'Build'));
  } else if (r.buildId) {
    parts.push(h('span', { class: 'meta-build' }, `Build #${r.buildId}`));
  }
  return h('span', { class: 'report-meta' }, ...parts);
}

// summaryLine shows the headline figures reportd read from a report it
// recognised (coverage.py, istanbul, JaCoCo, mochawesome, pytest-html,
// Playwright, Allure): line coverage and test counts; nothing for other
// reports. Flaky tests (Playwright, Allure 3) are shown when the report
// tells them; they are also counted in passed or failed, as the title says.
export function summaryLine(r) {
  const s = r.summary;
  if (!s) return null;
  const parts = [];
  if (typeof s.lines === 'number') parts.push(h('span', { class: 'sum-lines' }, `${Math.round(s.lines * 10) / 10}% lines`));
  const titles = { flaky: 'Marked flaky by the generator (Playwright: failed, then passed on a retry); also counted in passed or failed' };
  const counts = [['passed', 'sum-passed'], ['failed', 'sum-failed'], ['skipped', 'sum-skipped'], ['flaky', 'sum-flaky']]
    .filter(([k]) => typeof s[k] === 'number')
    .map(([k, cls]) => h('span', titles[k] ? { class: cls, title: titles[k] } : { class: cls }, `${s[k]} ${k}`));
  parts.push(...counts);
  if (!parts.length) return null;
  return h('span', { class: 'report-summary', title: r.generator ? `Read from the ${r.generator} report` : 'Headline figures' }, ...parts);
}

// filterBar offers a select per field (name, branch) with the values the
// reports have; onchange(key, value) gets each choice ('' is all).
export function filterBar(reports, chosen, onchange) {
  const select = (key, label, plural, values) => {
    const id = `filter-${key}`;
    const sel = h('select', { id, name: key, onchange: () => onchange(key, sel.value) },
      h('option', { value: '' }, `All ${plural}`),
      ...values.map((v) => h('option', { value: v }, v)));
    sel.value = values.includes(chosen[key]) ? chosen[key] : '';
    return h('label', { class: 'filter', for: id }, h('span', { class: 'filter-label' }, `${label[0].toUpperCase()}${label.slice(1)}`), sel);
  };
  const uniq = (f) => [...new Set(reports.map(f).filter(Boolean))].sort();
  return h('div', { class: 'report-filters', role: 'group', 'aria-label': 'Filter reports' },
    select('name', 'name', 'names', uniq((r) => r.name)),
    select('branch', 'branch', 'branches', uniq((r) => r.branch)));
}

// matches says whether r passes the chosen filters.
export const matches = (r, chosen) => (!chosen.name || r.name === chosen.name) && (!chosen.branch || r.branch === chosen.branch);

export function reportRow(r, refresh) {
  return h('li', { class: 'report', 'data-report-id': r.id },
    typeIcon(r.fileType),
    h('div', { class: 'report-main' },
      h('a', { href: `#/reports/${r.id}`, class: 'report-name' }, r.fileName),
      h('span', { class: 'report-time' }, 'Uploaded ', h('time', { datetime: r.uploadTime }, formatTime(r.uploadTime))),
      buildMeta(r),
      r.kind === 'site' ? h('span', { class: 'report-site' }, `HTML site · ${plural(r.files ?? 0, 'file', 'files')} · ${formatSize(r.bytes ?? 0)}`) : null,
      r.generator ? h('span', { class: 'report-generator' }, r.generator) : null,
      summaryLine(r)),
    h('div', { class: 'report-actions' },
      h('a', { href: api.downloadURL(r.id), class: 'btn btn-small', download: '', 'aria-label': `Download ${r.fileName}` }, 'Download'),
      h('button', {
        type: 'button', class: 'btn btn-small', 'aria-label': `Rename ${r.fileName}`,
        onclick: async () => { const s = await rename(r); if (s && s.fileName !== r.fileName) { announce(`Renamed to “${s.fileName}”.`); refresh(); } },
      }, 'Rename'),
      h('button', {
        type: 'button', class: 'btn btn-small btn-quiet-danger', 'aria-label': `Delete ${r.fileName}`,
        onclick: async () => { if (await remove(r)) { announce(`Deleted “${r.fileName}”.`); refresh(); } },
      }, 'Delete')));
}

// newestFirst orders by id, descending: ids grow with each upload, and
// uploadTime has only second resolution.
export const newestFirst = (a, b) => b.id - a.id;
