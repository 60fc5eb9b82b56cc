// Stable links (docs/links.md): URLs that always reach the newest report
// of a project, or of one report name in it, for CI badges and PR
// comments. The project is named by id, which a rename does not change.

import { h, announce } from './dom.js';

// Names the link syntax reserves (actions, badges) or cannot carry in a
// path segment go in ?name= instead.
const RESERVED = new Set(['pdf', 'download', 'preview', 'site', 'badge.svg', 'badge.json', 'latest']);

// base is the dashboard's absolute URL with a trailing slash: from the
// report's dashboardUrl (public_url when configured), else this page.
function base(r) {
  if (r.dashboardUrl) return r.dashboardUrl.split('#')[0].replace(/\/?$/, '/');
  return new URL('.', location.href).href;
}

// latestURL is /p/{project}/latest[/{name}][/{action}].
export function latestURL(r, { name = null, action = '' } = {}) {
  const p = `${base(r)}p/${r.projectId}/latest`;
  if (name === null) return p + (action ? `/${action}` : '');
  if (name.includes('/') || RESERVED.has(name)) return `${p}${action ? `/${action}` : ''}?name=${encodeURIComponent(name)}`;
  return `${p}/${encodeURIComponent(name)}${action ? `/${action}` : ''}`;
}

function badgeURL(r) {
  const p = `${base(r)}p/${r.projectId}`;
  if (r.name.includes('/') || RESERVED.has(r.name)) return `${p}/badge.svg?name=${encodeURIComponent(r.name)}`;
  return `${p}/${encodeURIComponent(r.name)}/badge.svg`;
}

export function copyRow(id, label, url) {
  const input = h('input', { type: 'text', id, readonly: true, value: url, spellcheck: 'false', onfocus: (e) => e.target.select() });
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(url);
    } catch {
      // No clipboard API (a page not served over https, a denied
      // permission): the selected text copies with the keyboard.
      input.focus();
      input.select();
      announce('Press Ctrl+C to copy the selected link.');
      return;
    }
    announce('Link copied.');
  };
  return h('div', { class: 'link-row' },
    h('label', { for: id }, label),
    input,
    h('button', { type: 'button', class: 'btn btn-small', 'aria-label': `Copy: ${label}`, onclick: copy }, 'Copy'));
}

// projectLinks is the project page's panel: the project's newest report
// and the newest of each report name it has (reports as listed).
export function projectLinks(projectId, reports) {
  const any = reports.find((r) => r.dashboardUrl) || {};
  const r = { projectId, dashboardUrl: any.dashboardUrl };
  const names = [...new Set(reports.map((x) => x.name).filter(Boolean))].sort();
  return h('details', { class: 'stable-links', id: 'project-links' },
    h('summary', {}, 'Stable links'),
    h('p', { class: 'hint' }, 'These URLs always lead to the newest report; put them in a README badge or a pull-request comment.'),
    copyRow('plink-project', 'Latest report of this project', latestURL(r)),
    names.map((n, i) => copyRow(`plink-name-${i}`, `Latest “${n}”`, latestURL(r, { name: n }))));
}

// stableLinks is the reader's panel of copyable stable URLs for r.
export function stableLinks(r, runsAsSite) {
  const rows = [copyRow('link-project', 'Latest report of this project', latestURL(r))];
  if (r.name) {
    rows.push(copyRow('link-name', `Latest “${r.name}”`, latestURL(r, { name: r.name })));
    if (runsAsSite) rows.push(copyRow('link-site', `Latest “${r.name}”, opened as a site`, latestURL(r, { name: r.name, action: 'site' })));
    rows.push(copyRow('link-badge', `Badge of “${r.name}”`, badgeURL(r)));
  }
  return h('details', { class: 'stable-links' },
    h('summary', {}, 'Stable links'),
    h('p', { class: 'hint' }, 'These URLs always lead to the newest report; put them in a README badge or a pull-request comment.'),
    ...rows);
}
