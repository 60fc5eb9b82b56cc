// Reports that run on the content origin (issue 16): an HTML site (kind
// "site") or a single HTML file the daemon offers there (siteUrl set). The
// page is framed from its siteUrl, scripts running, with a file tree of
// the site beside it whose entries open in the same frame.
//
// The frame has a sandbox, but not for isolation: the content origin is
// another origin (one per report where DNS allows), so the browser's
// same-origin policy already keeps the report's scripts away from the
// dashboard, its storage and its token. allow-same-origin keeps the
// report on that origin of its own (its localStorage, fetch of data/*.json,
// service workers and the access cookie of a signed URL all need it; an
// opaque origin breaks them, Qodana#27). What the sandbox withholds is
// navigating the dashboard's tab (allow-top-navigation*): a report cannot
// replace the dashboard with a page of its choosing. Popups escape the
// sandbox, so a report's "open in new tab" links behave as on their own.

import * as api from './api.js';
import { h } from './dom.js';
import { formatSize, plural } from './format.js';
import { loading, failure } from './states.js';

export const SITE_SANDBOX = 'allow-scripts allow-same-origin allow-forms allow-popups allow-popups-to-escape-sandbox allow-modals allow-downloads';

// runsOnContentOrigin says whether the reader frames r from its siteUrl.
export const runsOnContentOrigin = (r) => Boolean(r.siteUrl) && (r.kind === 'site' || r.fileType === 'html');

export const isSite = (r) => r.kind === 'site';

// siteFacts is the reader's line for a site: file count and size.
export function siteFacts(r) {
  if (!isSite(r)) return null;
  return h('span', { class: 'site-facts' },
    h('span', { class: 'site-files-count' }, plural(r.files ?? 0, 'file', 'files')),
    ' · ',
    h('span', { class: 'site-bytes', title: `${r.bytes ?? 0} bytes` }, formatSize(r.bytes ?? 0)));
}

// tree turns sorted slash paths into nested folders.
function tree(files) {
  const root = { dirs: new Map(), files: [] };
  for (const f of files) {
    const parts = f.path.split('/');
    let node = root;
    for (const dir of parts.slice(0, -1)) {
      if (!node.dirs.has(dir)) node.dirs.set(dir, { dirs: new Map(), files: [], path: node.path ? `${node.path}/${dir}` : dir });
      node = node.dirs.get(dir);
    }
    node.files.push({ ...f, name: parts[parts.length - 1] });
  }
  return root;
}

const count = (node) => node.files.length + [...node.dirs.values()].reduce((n, d) => n + count(d), 0);

// fileTree lists the site's files, folders first; a folder's entries are
// drawn when it is first opened, so a site of 10,000 files costs what is
// shown. open(f) shows a file in the frame.
function fileTree(listing, open) {
  const entryDir = listing.entry.includes('/') ? listing.entry.slice(0, listing.entry.lastIndexOf('/')) : '';
  // Plain list markup: a folder's entries are a nested list.
  const list = (node) => h('ul', { class: 'tree' },
    [...node.dirs.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([name, d]) => {
      const body = h('details', { class: 'tree-dir', 'data-path': d.path },
        h('summary', {}, h('span', { class: 'tree-name' }, name + '/'), h('span', { class: 'tree-size' }, String(count(d)))));
      body.addEventListener('toggle', () => { if (body.open && body.childElementCount === 1) body.append(list(d)); });
      // The entry page's folder starts open.
      if (entryDir === d.path || entryDir.startsWith(d.path + '/')) body.open = true;
      return h('li', {}, body);
    }),
    node.files.map((f) => h('li', {},
      f.url
        ? h('a', {
          class: 'tree-file', href: f.url, 'data-path': f.path, target: '_blank', rel: 'noopener noreferrer',
          'aria-current': f.path === listing.entry ? 'page' : null, title: `${f.path} · ${f.contentType}`,
          onclick: (e) => {
            if (e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0) return; // a new tab, as asked
            e.preventDefault();
            open(f);
          },
        }, h('span', { class: 'tree-name' }, f.name), h('span', { class: 'tree-size' }, formatSize(f.size)))
        : h('span', { class: 'tree-file', 'data-path': f.path }, h('span', { class: 'tree-name' }, f.name), h('span', { class: 'tree-size' }, formatSize(f.size))))));
  const root = tree(listing.files);
  const top = list(root);
  top.setAttribute('aria-label', 'Site files');
  // Folders open lazily; the ones open from the start are drawn now.
  for (const d of top.querySelectorAll('details[open]')) d.dispatchEvent(new Event('toggle'));
  return top;
}

// siteView frames r's siteUrl and, for a site, lists its files.
export function siteView(r) {
  const ctrl = new AbortController();
  const frame = r.siteUrl
    ? h('iframe', {
      class: 'frame frame-site', src: r.siteUrl, title: r.fileName, sandbox: SITE_SANDBOX,
      allow: 'clipboard-write; fullscreen', referrerpolicy: 'no-referrer',
    })
    : h('div', { class: 'state' }, h('h2', {}, 'No content origin'),
      h('p', {}, 'This daemon has no content origin configured (content.url), where HTML sites run. Download the site to read it.'));
  const newTab = r.siteUrl
    ? h('a', { class: 'btn btn-small', id: 'open-site', href: r.siteUrl, target: '_blank', rel: 'noopener noreferrer' }, 'Open in new tab')
    : null;
  if (!isSite(r)) {
    return { el: h('div', { class: 'viewer viewer-site', 'data-state': 'ready' }, h('div', { class: 'site-bar' }, newTab), frame), stop() {} };
  }
  const filesBox = h('div', { class: 'site-tree' }, loading('Listing the files…'));
  const panel = h('details', { class: 'site-files', open: true },
    h('summary', {}, 'Files ', h('span', { class: 'muted' }, `(${r.files ?? 0})`)), filesBox);
  const shown = h('code', { class: 'site-current' }, r.entry || '/');
  const open = (f) => {
    frame.src = f.url;
    shown.textContent = f.path;
    for (const a of filesBox.querySelectorAll('a[aria-current]')) a.removeAttribute('aria-current');
    filesBox.querySelector(`a[data-path="${CSS.escape(f.path)}"]`)?.setAttribute('aria-current', 'page');
  };
  const load = () => {
    filesBox.replaceChildren(loading('Listing the files…'));
    api.listFiles(r.id, ctrl.signal).then((listing) => {
      filesBox.replaceChildren(fileTree(listing, open));
      filesBox.dataset.state = 'ready';
    }, (e) => {
      if (e.name === 'AbortError') return;
      filesBox.dataset.state = 'error';
      filesBox.replaceChildren(failure('Could not list the files', e, load));
    });
  };
  load();
  const el = h('div', { class: 'viewer viewer-site', 'data-state': 'ready' },
    h('div', { class: 'site-bar' }, h('span', { class: 'muted' }, 'Showing '), shown, newTab),
    h('div', { class: 'site-body' }, panel, frame));
  return { el, stop: () => ctrl.abort() };
}
