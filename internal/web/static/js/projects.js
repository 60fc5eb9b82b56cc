// The home screen: every project as a card, with a name filter.

import * as api from './api.js';
import { h, clear, announce } from './dom.js';
import { plural, formatTime } from './format.js';
import { createProject, deleteProject, editProject } from './projectforms.js';
import { installPanel } from './install.js';
import { loading, empty, failure } from './states.js';

let filterText = '';

// coverOf is the card's image, or a lettered tile when there is none or
// the file cannot be loaded.
export function coverOf(p, cls) {
  const tile = () => h('div', { class: cls + ' cover-none tone-' + (p.id % 6), 'aria-hidden': 'true' }, (p.name.trim()[0] || '?').toUpperCase());
  if (!p.coverImage) return tile();
  const img = h('img', { class: cls, src: api.siteURL(p.coverImage), alt: '', loading: 'lazy', decoding: 'async' });
  img.addEventListener('error', () => img.replaceWith(tile()), { once: true });
  return img;
}

function card(p, refresh) {
  const edit = async () => {
    const saved = await editProject(p);
    if (saved) { announce(`Saved “${saved.name}”.`); refresh(); }
  };
  const del = async () => {
    if (await deleteProject(p)) { announce(`Deleted “${p.name}”.`); refresh(); }
  };
  return h('li', { class: 'card', 'data-project-id': p.id },
    coverOf(p, 'card-cover'),
    h('div', { class: 'card-body' },
      h('h2', { class: 'card-title' }, h('a', { href: `#/projects/${p.id}`, class: 'card-link' }, p.name)),
      p.description ? h('p', { class: 'card-desc' }, p.description) : h('p', { class: 'card-desc muted' }, 'No description'),
      h('p', { class: 'card-meta' },
        h('span', { class: 'count' }, plural(p.reportCount, 'report', 'reports')),
        p.todayNewReports > 0 ? h('span', { class: 'badge badge-today', title: 'Reports added today' }, `+${p.todayNewReports} today`) : null,
        h('span', { class: 'created' }, 'Created ', h('time', { datetime: p.createdAt }, formatTime(p.createdAt))))),
    h('div', { class: 'card-actions' },
      h('button', { type: 'button', class: 'btn btn-small', onclick: edit, 'aria-label': `Edit ${p.name}` }, 'Edit'),
      h('button', { type: 'button', class: 'btn btn-small btn-quiet-danger', onclick: del, 'aria-label': `Delete ${p.name}` }, 'Delete')));
}

export function renderProjects(main) {
  document.title = 'Projects · reportd';
  const heading = h('h1', { tabindex: -1 }, 'Projects');
  const filter = h('input', { type: 'search', id: 'project-filter', placeholder: 'Filter by name', value: filterText, autocomplete: 'off' });
  const newBtn = h('button', { type: 'button', class: 'btn btn-primary', id: 'new-project' }, h('span', { 'aria-hidden': 'true' }, '+ '), 'New project');
  const body = h('div', { class: 'projects-body' });
  const count = h('p', { class: 'result-count', role: 'status' });
  let projects = [];

  clear(main).append(
    h('div', { class: 'page-head' }, heading, h('div', { class: 'toolbar' },
      h('label', { class: 'filter' }, h('span', { class: 'sr-only' }, 'Filter projects by name'), filter),
      newBtn)),
    count, body, installPanel());

  const show = () => {
    clear(body);
    const q = filterText.trim().toLowerCase();
    const shown = q ? projects.filter((p) => p.name.toLowerCase().includes(q)) : projects;
    count.textContent = q ? `${plural(shown.length, 'project', 'projects')} match “${filterText.trim()}”` : '';
    if (projects.length === 0) {
      body.append(empty('No projects yet', 'A project holds the reports of one product, pipeline or team. Create one to start publishing.',
        h('button', { type: 'button', class: 'btn btn-primary', onclick: create }, 'Create your first project')));
    } else if (shown.length === 0) {
      body.append(empty('No matching projects', `No project name contains “${filterText.trim()}”.`,
        h('button', { type: 'button', class: 'btn', onclick: () => { filter.value = ''; filterText = ''; show(); filter.focus(); } }, 'Clear filter')));
    } else {
      body.append(h('ul', { class: 'cards' }, shown.map((p) => card(p, load))));
    }
  };

  async function load() {
    if (projects.length === 0) clear(body).append(loading('Loading projects…'));
    try {
      const list = await api.listProjects();
      // The user may have moved on while the request was out.
      if (!body.isConnected) return;
      projects = list;
      show();
    } catch (e) {
      if (body.isConnected) clear(body).append(failure('Could not load projects', e, load));
    }
  }

  async function create() {
    const p = await createProject();
    if (p) {
      announce(`Created “${p.name}”.`);
      location.hash = `#/projects/${p.id}`;
    }
  }

  filter.addEventListener('input', () => { filterText = filter.value; if (projects.length) show(); });
  newBtn.addEventListener('click', create);
  load();
  return heading;
}
