// The reader: one report, shown in the page the way its type allows.
//   site       its siteUrl on the content origin, scripts running, with its
//              file tree (site.js)
//   html       from its siteUrl on the content origin when the daemon has
//              one (site.js); else the preview in a sandboxed iframe (no
//              allow-same-origin: the report runs, if at all, in an opaque
//              origin)
//   md         the server's rendering (the HTML its PDF prints) in a sandboxed
//              iframe without scripts; its PDF on request
//   pdf        the browser's own viewer
//   ppt, pptx  the daemon's PDF rendering in the browser's viewer
// PDFs are fetched first so that a conversion error reads as a message
// rather than as raw JSON inside a frame.

import * as api from './api.js';
import { h, clear } from './dom.js';
import { formatSize, formatTime } from './format.js';
import { compareSection } from './compare.js';
import { stableLinks } from './links.js';
import { summaryLine, typeIcon } from './reportlist.js';
import { isSite, runsOnContentOrigin, siteFacts, siteView } from './site.js';
import { loading, failure } from './states.js';
import { TYPES } from './types.js';

let current = null; // the active view's teardown

// noViewer is the deliberate state for browsers that cannot show a PDF
// inside a page (many phones, headless browsers): a blank frame would
// look like a failure, so offer the two ways that do work.
function noViewer(url, fileName, size) {
  return h('div', { class: 'state pdf-ready' },
    h('span', { class: 'ficon ficon-pdf ficon-big', 'aria-hidden': 'true' }, 'PDF'),
    h('h2', {}, 'The PDF is ready'),
    h('p', {}, `This browser does not show PDFs inside a page. Open it in a tab of its own or save it (${formatSize(size)}).`),
    h('div', { class: 'state-actions' },
      h('a', { class: 'btn btn-primary', id: 'open-pdf', href: url, target: '_blank', rel: 'noopener' }, 'Open PDF'),
      h('a', { class: 'btn', href: url, download: fileName }, 'Download PDF')));
}

function pdfFrame(url, title, waitText, fileName) {
  const box = h('div', { class: 'viewer viewer-pdf' }, loading(waitText));
  const ctrl = new AbortController();
  let objectURL = null;
  const load = () => {
    box.replaceChildren(loading(waitText));
    // Fetched even without a viewer: that is how a failed conversion
    // becomes a message instead of a broken link.
    api.fetchBlob(url, ctrl.signal).then((blob) => {
      if (navigator.pdfViewerEnabled === false) {
        box.replaceChildren(noViewer(url, fileName, blob.size));
      } else {
        objectURL = URL.createObjectURL(blob.type === 'application/pdf' ? blob : new Blob([blob], { type: 'application/pdf' }));
        box.replaceChildren(h('iframe', { class: 'frame', src: objectURL, title, 'data-source': url }));
      }
      box.dataset.state = 'ready';
    }, (e) => {
      if (e.name === 'AbortError') return;
      box.dataset.state = 'error';
      box.replaceChildren(failure('Could not show the PDF', e, load));
    });
  };
  load();
  return { el: box, stop: () => { ctrl.abort(); if (objectURL) URL.revokeObjectURL(objectURL); } };
}

function htmlFrame(r) {
  // allow-scripts without allow-same-origin keeps report scripts away from
  // the dashboard; the daemon's own CSP sandbox applies on top.
  const el = h('div', { class: 'viewer viewer-html', 'data-state': 'ready' },
    h('iframe', { class: 'frame frame-html', src: api.previewURL(r.id), sandbox: 'allow-scripts allow-popups', referrerpolicy: 'no-referrer', title: r.fileName }));
  return { el, stop() {} };
}

function markdownView(r) {
  // The daemon renders Markdown with the renderer and stylesheet of the
  // PDF, so the two never disagree. Fetched first so that a rendering
  // error reads as a message; the frame then loads the same URL, which the
  // daemon answers with a CSP sandbox that runs no script and loads nothing.
  const box = h('div', { class: 'viewer viewer-md' }, loading('Rendering the document…'));
  const ctrl = new AbortController();
  const load = () => {
    box.replaceChildren(loading('Rendering the document…'));
    api.fetchText(api.htmlURL(r.id), ctrl.signal).then(() => {
      box.replaceChildren(h('iframe', { class: 'frame frame-md', src: api.htmlURL(r.id), sandbox: '', referrerpolicy: 'no-referrer', title: r.fileName }));
      box.dataset.state = 'ready';
    }, (e) => {
      if (e.name === 'AbortError') return;
      box.dataset.state = 'error';
      box.replaceChildren(failure('Could not show the document', e, load));
    });
  };
  load();
  return { el: box, stop: () => ctrl.abort() };
}

function viewFor(r, mode) {
  const pdfName = r.fileName.replace(/\.[^.]+$/, '') + '.pdf';
  if (mode === 'pdf' || r.fileType === 'ppt' || r.fileType === 'pptx') {
    const wait = r.fileType === 'pdf' ? 'Loading the PDF…' : 'Converting to PDF… the first time can take a few seconds.';
    return pdfFrame(api.pdfURL(r.id), `${r.fileName} as PDF`, wait, pdfName);
  }
  if (r.fileType === 'pdf') return pdfFrame(api.previewURL(r.id), r.fileName, 'Loading the PDF…', r.fileName);
  if (isSite(r) || runsOnContentOrigin(r)) return siteView(r);
  if (r.fileType === 'html') return htmlFrame(r);
  return markdownView(r);
}

// siteZipName is the name the daemon gives a site's download: its file
// name without an archive extension, plus .zip (service.SiteZipName).
const siteZipName = (name) => name.replace(/(.)\.(tar\.gz|tgz|tar|zip)$/i, '$1') + '.zip';

export function renderReader(main, id) {
  current?.stop();
  current = null;
  const heading = h('h1', { tabindex: -1, class: 'reader-title' }, 'Report');
  const crumbs = h('nav', { class: 'crumbs', 'aria-label': 'Breadcrumb' }, h('a', { href: '#/' }, 'Projects'));
  clear(main).append(crumbs, heading, loading('Loading report…'));
  main.classList.add('wide');

  (async () => {
    let r;
    try {
      r = await api.getReport(id);
    } catch (e) {
      if (!heading.isConnected) return;
      main.lastChild.replaceWith(failure(e.type === 'NotFoundError' ? 'This report does not exist' : 'Could not load the report', e));
      return;
    }
    // The user may have moved on while the request was out.
    if (!heading.isConnected) return;
    document.title = `${r.fileName} · reportd`;
    heading.replaceChildren(typeIcon(r.fileType), h('span', {}, r.fileName));
    api.getProject(r.projectId).then((p) => {
      crumbs.append(h('span', { 'aria-hidden': 'true' }, ' / '), h('a', { href: `#/projects/${p.id}`, id: 'back-to-project' }, p.name));
      // The links name the project by its slug once it is known.
      const old = main.querySelector('.reader > .stable-links');
      if (old && p.slug) {
        const links = stableLinks({ ...r, projectSlug: p.slug }, runsOnContentOrigin(r));
        links.open = old.open;
        old.replaceWith(links);
      }
    }, () => { /* the breadcrumb stays at Projects; the links keep the id */ });

    // "Compared with …" once the project's reports (for the base picker) are in.
    const compareSlot = h('div', { class: 'compare-slot' });
    if (r.name) {
      api.listReports(r.projectId).then((reports) => {
        if (heading.isConnected) compareSlot.replaceChildren(compareSection(r, reports));
      }, () => { /* no picker without the list; the reader still works */ });
    }
    const stage = h('div', { class: 'stage' });
    const modes = r.fileType === 'md' || r.fileType === 'html'
      ? h('div', { class: 'seg', role: 'group', 'aria-label': 'Show as' },
        h('button', { type: 'button', class: 'seg-btn', 'aria-pressed': 'true', 'data-mode': 'native' }, r.fileType === 'md' ? 'Rendered' : 'Page'),
        h('button', { type: 'button', class: 'seg-btn', 'aria-pressed': 'false', 'data-mode': 'pdf' }, 'PDF'))
      : null;
    const show = (mode) => {
      current?.stop();
      current = viewFor(r, mode);
      stage.replaceChildren(current.el);
      for (const b of modes?.querySelectorAll('button') || []) b.setAttribute('aria-pressed', String(b.dataset.mode === mode));
    };
    modes?.addEventListener('click', (e) => { const b = e.target.closest('button'); if (b) show(b.dataset.mode); });

    const base = r.fileName.replace(/\.[^.]+$/, '');
    const site = isSite(r);
    main.lastChild.replaceWith(h('div', { class: 'reader' },
      h('div', { class: 'reader-bar' },
        h('p', { class: 'reader-meta' }, site ? 'HTML site' : TYPES[r.fileType]?.name || r.fileType,
          r.generator ? [' · ', h('span', { class: 'reader-generator', title: 'The tool that wrote the report' }, r.generator)] : null,
          site ? [' · ', siteFacts(r)] : null,
          ' · uploaded ', h('time', { datetime: r.uploadTime }, formatTime(r.uploadTime))),
        summaryLine(r),
        modes,
        h('div', { class: 'reader-actions' },
          site
            ? h('a', { class: 'btn', id: 'download-original', href: api.downloadURL(r.id), download: siteZipName(r.fileName) }, 'Download (.zip)')
            : h('a', { class: 'btn', id: 'download-original', href: api.downloadURL(r.id), download: r.fileName }, 'Download original'),
          h('a', { class: 'btn btn-primary', id: 'get-pdf', href: api.pdfURL(r.id), download: base + '.pdf' }, 'Get PDF'),
          // Every page reachable from the entry, merged with a bookmark each.
          site ? h('a', { class: 'btn', id: 'get-site-pdf', href: api.pdfURL(r.id) + '?scope=site', download: base + '-all-pages.pdf',
            title: 'Every page of the site linked from its entry page, in one PDF with a bookmark per page' }, 'PDF of all pages') : null)),
      stableLinks(r, runsOnContentOrigin(r)),
      compareSlot,
      stage));
    show('native');
  })();
  return heading;
}

// leaveReader stops a PDF fetch and frees its memory when the route changes.
export function leaveReader(main) {
  current?.stop();
  current = null;
  main.classList.remove('wide');
}
