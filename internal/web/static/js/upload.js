// The upload area of a project page: drag and drop or a file picker, type
// checks before anything is sent, and one progress row per file.

import * as api from './api.js';
import { h, announce } from './dom.js';
import { formatSize } from './format.js';
import { ACCEPT, SITE_ARCHIVE, TYPES, typeOf } from './types.js';

// The checks reportd makes on content (DESIGN.md, upload validation):
// binary types carry a signature, text types have no NUL bytes. Making
// them here too saves sending a renamed file only to have it refused.
const SIGNATURES = {
  pdf: [[0x25, 0x50, 0x44, 0x46, 0x2d], 'a PDF'], // %PDF-
  pptx: [[0x50, 0x4b, 0x03, 0x04], 'a PPTX (zip) file'],
  ppt: [[0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1], 'a PPT (OLE2) file'],
};

// siteArchive checks what the daemon takes as a site: a zip, a gzip
// (a .tar.gz), a zstd frame (a .tar.zst) or a tar ("ustar" at offset 257).
async function siteArchive(file) {
  let head;
  try {
    head = new Uint8Array(await file.slice(0, 262).arrayBuffer());
  } catch {
    return 'the file could not be read.';
  }
  const at = (off, bytes) => bytes.every((b, i) => head[off + i] === b);
  if (at(0, [0x50, 0x4b, 0x03, 0x04]) || at(0, [0x50, 0x4b, 0x05, 0x06]) || at(0, [0x1f, 0x8b]) || at(0, [0x28, 0xb5, 0x2f, 0xfd]) || at(257, [0x75, 0x73, 0x74, 0x61, 0x72])) return null;
  return 'the content is not a zip, tar.gz, tar.zst or tar archive, whatever its name says.';
}

async function sniff(file, type, site) {
  if (site) return siteArchive(file);
  const sig = SIGNATURES[type];
  let head;
  try {
    head = new Uint8Array(await file.slice(0, sig ? sig[0].length : 8192).arrayBuffer());
  } catch {
    return 'the file could not be read.';
  }
  if (!sig) return head.includes(0) ? 'the content is not text (it contains NUL bytes).' : null;
  const ok = sig[0].every((b, i) => head[i] === b);
  return ok ? null : `the content is not ${sig[1]}, whatever its name says.`;
}

// Closing or reloading the tab would abort uploads still in flight; the
// browser asks first while any are. (Changing pages inside the dashboard
// does not stop them.)
let inFlight = 0;
window.addEventListener('beforeunload', (e) => { if (inFlight > 0) e.preventDefault(); });

// Two at a time keeps a big batch moving without starving the page.
const PARALLEL = 2;

export function uploader(projectId, onUploaded) {
  const input = h('input', { type: 'file', multiple: true, accept: ACCEPT, class: 'sr-only', id: 'upload-input', tabindex: -1, 'aria-label': 'Report files to upload' });
  const pick = h('button', { type: 'button', class: 'btn btn-primary', id: 'upload-pick', onclick: () => input.click() }, 'Choose files');
  const list = h('ul', { class: 'uploads', 'aria-label': 'Uploads' });
  const clearDone = h('button', {
    type: 'button', class: 'btn btn-small', hidden: true,
    onclick: () => {
      for (const li of list.querySelectorAll('.upload-done, .upload-rejected')) li.remove();
      clearDone.hidden = true;
      pick.focus();
    },
  }, 'Clear finished');
  const finished = () => { clearDone.hidden = !list.querySelector('.upload-done, .upload-rejected'); };
  const zone = h('div', { class: 'dropzone', id: 'dropzone' },
    h('p', { class: 'dropzone-text' }, h('strong', {}, 'Drop report files here'), ' or ', pick),
    h('p', { class: 'hint' }, 'HTML, Markdown, PDF, PPT and PPTX (.html, .md, .pdf, .ppt, .pptx), and whole HTML sites as .zip, .tar.gz, .tar.zst or .tar. Several at once is fine.'),
    input);
  const queue = [];
  let running = 0;

  function add(files) {
    for (const file of files) {
      const site = SITE_ARCHIVE.test(file.name);
      const type = site ? 'html' : typeOf(file.name);
      const kind = site ? 'HTML site' : TYPES[type]?.name;
      const status = h('span', { class: 'upload-status' });
      const bar = h('progress', { max: 100, value: 0, 'aria-label': `Upload progress of ${file.name}` });
      const actions = h('span', { class: 'upload-actions' });
      const row = h('li', { class: 'upload' },
        h('span', { class: 'upload-name' }, file.name),
        h('span', { class: 'upload-size' }, formatSize(file.size)), bar, status, actions);
      list.prepend(row);
      const reject = (why) => {
        row.classList.add('upload-rejected');
        bar.hidden = true;
        status.textContent = 'Not sent: ' + why;
        finished();
      };
      if (!type) { reject('only .html, .md, .pdf, .ppt and .pptx files can be published. HTML sites: .zip, .tar.gz, .tar.zst or .tar.'); continue; }
      if (file.size === 0) { reject('the file is empty.'); continue; }
      status.textContent = `Checking · ${kind}`;
      sniff(file, type, site).then((problem) => {
        if (problem) { reject(problem); return; }
        status.textContent = `Waiting · ${kind}`;
        queue.push({ file, type, row, bar, status, actions });
        pump();
      });
    }
  }

  function pump() {
    while (running < PARALLEL && queue.length) start(queue.shift());
  }

  function start(job) {
    running++;
    inFlight++;
    const { file, type, row, bar, status, actions } = job;
    row.classList.remove('upload-failed');
    row.classList.add('upload-running');
    status.textContent = 'Uploading…';
    const up = api.uploadReport(file, projectId, type, (f) => {
      const pct = Math.round(f * 100);
      bar.value = pct;
      status.textContent = pct < 100 ? `Uploading… ${pct}%` : 'Processing…';
    });
    actions.replaceChildren(h('button', { type: 'button', class: 'btn btn-small', onclick: up.abort, 'aria-label': `Cancel upload of ${file.name}` }, 'Cancel'));
    up.promise.then((rep) => {
      row.classList.add('upload-done');
      status.textContent = 'Published';
      actions.replaceChildren(rep ? h('a', { href: `#/reports/${rep.id}`, class: 'btn btn-small' }, 'Open') : '');
      finished();
      onUploaded(rep);
    }, (err) => {
      row.classList.add('upload-failed');
      status.textContent = err.message;
      actions.replaceChildren(h('button', {
        type: 'button', class: 'btn btn-small', 'aria-label': `Retry upload of ${file.name}`,
        onclick: () => { actions.replaceChildren(); queue.push(job); pump(); },
      }, 'Retry'));
      announce(`Upload of ${file.name} failed: ${err.message}`, 'error');
    }).finally(() => {
      row.classList.remove('upload-running');
      running--;
      inFlight--;
      pump();
    });
  }

  input.addEventListener('change', () => { add([...input.files]); input.value = ''; });
  zone.addEventListener('dragenter', (e) => { e.preventDefault(); zone.classList.add('dragging'); });
  zone.addEventListener('dragover', (e) => { e.preventDefault(); e.dataTransfer.dropEffect = 'copy'; zone.classList.add('dragging'); });
  zone.addEventListener('dragleave', (e) => { if (!zone.contains(e.relatedTarget)) zone.classList.remove('dragging'); });
  zone.addEventListener('drop', (e) => {
    e.preventDefault();
    zone.classList.remove('dragging');
    add([...e.dataTransfer.files]);
  });
  return h('section', { class: 'upload-area', 'aria-label': 'Publish reports' }, zone, list, h('div', { class: 'uploads-foot' }, clearDone));
}
