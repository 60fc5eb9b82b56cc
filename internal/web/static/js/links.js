// Stable links (docs/links.md): URLs that always reach the newest report
// of a project, or of one report in it (its name and file type: deck.pdf
// and deck.pptx are both "deck"), for CI badges and PR comments. The
// project is named by its slug, which a rename does not change (by id
// until the project is known).

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

// projectRef is how links name r's project: its slug when known.
const projectRef = (r) => r.projectSlug || r.projectId;

// query is ?name=&type= for the parameters that are set.
function query(name, type) {
  const q = new URLSearchParams();
  if (name !== null) q.set('name', name);
  if (type) q.set('type', type);
  const s = q.toString();
  return s ? `?${s}` : '';
}

// latestURL is /p/{project}/latest[/{name}][/{action}][?type=].
export function latestURL(r, { name = null, type = '', action = '' } = {}) {
  const p = `${base(r)}p/${projectRef(r)}/latest`;
  const act = action ? `/${action}` : '';
  if (name === null) return p + act;
  if (name.includes('/') || RESERVED.has(name)) return `${p}${act}${query(name, type)}`;
  return `${p}/${encodeURIComponent(name)}${act}${query(null, type)}`;
}

function badgeURL(r) {
  const p = `${base(r)}p/${projectRef(r)}`;
  if (r.name.includes('/') || RESERVED.has(r.name)) return `${p}/badge.svg${query(r.name, r.fileType)}`;
  return `${p}/${encodeURIComponent(r.name)}/badge.svg${query(null, r.fileType)}`;
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
// and the newest of each report (name and type) it has (reports as listed).
export function projectLinks(project, reports) {
  const any = reports.find((r) => r.dashboardUrl) || {};
  const r = { projectId: project.id, projectSlug: project.slug, dashboardUrl: any.dashboardUrl };
  const keys = [...new Set(reports.filter((x) => x.name).map((x) => `${x.name}\u0000${x.fileType}`))].sort();
  return h('details', { class: 'stable-links', id: 'project-links' },
    h('summary', {}, 'Stable links'),
    h('p', { class: 'hint' }, 'These URLs always lead to the newest report; put them in a README badge or a pull-request comment.'),
    copyRow('plink-project', 'Latest report of this project', latestURL(r)),
    keys.map((k, i) => {
      const [name, type] = k.split('\u0000');
      return copyRow(`plink-name-${i}`, `Latest “${name}” (${type})`, latestURL(r, { name, type }));
    }));
}

// stableLinks is the reader's panel of copyable stable URLs for r (with
// r.projectSlug when the project is known).
export function stableLinks(r, runsAsSite) {
  const rows = [copyRow('link-project', 'Latest report of this project', latestURL(r))];
  if (r.name) {
    const name = r.name, type = r.fileType;
    rows.push(copyRow('link-name', `Latest “${name}” (${type})`, latestURL(r, { name, type })));
    if (runsAsSite) rows.push(copyRow('link-site', `Latest “${name}”, opened as a site`, latestURL(r, { name, type, action: 'site' })));
    rows.push(copyRow('link-badge', `Badge of “${name}”`, badgeURL(r)));
  }
  return h('details', { class: 'stable-links' },
    h('summary', {}, 'Stable links'),
    h('p', { class: 'hint' }, 'These URLs always lead to the newest report; put them in a README badge or a pull-request comment.'),
    ...rows);
}
