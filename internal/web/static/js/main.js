// Entry point: hash routes, so the server needs to know only "/".
//   #/                 projects
//   #/projects/{id}    one project and its reports
//   #/reports/{id}     the reader

import { h, clear } from './dom.js';
import { renderProjects } from './projects.js';
import { renderProject } from './project.js';
import { renderReader, leaveReader } from './reader.js';
import { empty } from './states.js';
import { tokenButton } from './token.js';

const main = document.getElementById('main');
let first = true;

function route() {
  const hash = location.hash.replace(/^#/, '') || '/';
  leaveReader(main);
  let m;
  let heading;
  if (hash === '/' || hash === '') heading = renderProjects(main);
  else if ((m = /^\/projects\/(\d+)$/.exec(hash))) heading = renderProject(main, m[1]);
  else if ((m = /^\/reports\/(\d+)$/.exec(hash))) heading = renderReader(main, m[1]);
  else {
    document.title = 'Not found · reportd';
    heading = h('h1', { tabindex: -1 }, 'Page not found');
    clear(main).append(heading, empty('Nothing here', `There is no page at #${hash}.`, h('a', { class: 'btn', href: '#/' }, 'Go to projects')));
  }
  // Moving focus to the new heading tells keyboard and screen reader users
  // that the page changed; on first load the browser's default is kept.
  if (!first) heading?.focus({ preventScroll: false });
  first = false;
  window.scrollTo(0, 0);
}

// A file dropped outside the upload area would replace the whole page.
for (const ev of ['dragover', 'drop']) {
  window.addEventListener(ev, (e) => { if (!e.target.closest?.('.dropzone')) e.preventDefault(); });
}

document.querySelector('.topbar').append(tokenButton());

// The skip link must not touch the hash, which holds the route.
document.querySelector('.skip')?.addEventListener('click', (e) => { e.preventDefault(); main.focus(); });

// The footer names the running build, from the health check.
fetch('api/reports/ping').then((r) => (r.ok ? r.json() : null)).then((p) => {
  if (p && typeof p.version === 'string') document.getElementById('version').textContent = `reportd ${p.version}`;
}).catch(() => { /* the footer keeps its plain label */ });

window.addEventListener('hashchange', route);
// A token entered after a refusal: load the page again with it.
window.addEventListener('reportd:token', route);
route();
