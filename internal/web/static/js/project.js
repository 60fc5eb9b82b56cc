// A project's page: header, upload area, and its reports.

import * as api from './api.js';
import { h, clear, announce } from './dom.js';
import { plural } from './format.js';
import { coverOf } from './projects.js';
import { deleteProject, editProject } from './projectforms.js';
import { projectLinks } from './links.js';
import { filterBar, matches, newestFirst, reportRow } from './reportlist.js';
import { loading, empty, failure } from './states.js';
import { trendsSection } from './trends.js';
import { uploader } from './upload.js';

export function renderProject(main, id) {
  const heading = h('h1', { tabindex: -1 }, 'Project');
  clear(main).append(
    h('nav', { class: 'crumbs', 'aria-label': 'Breadcrumb' }, h('a', { href: '#/' }, 'Projects')),
    heading, loading('Loading project…'));
  let project = null;
  let listEl = null;
  let statsEl = null;
  let latest = [];
  const chosen = { name: '', branch: '' };

  // Uploads finish in any order; only the latest refresh may paint.
  let seq = 0;
  async function refreshReports() {
    const mine = ++seq;
    try {
      const [p, reports] = await Promise.all([api.getProject(id), api.listReports(id)]);
      if (mine !== seq) return;
      project = p;
      statsEl.replaceChildren(...stats(p));
      listEl.replaceChildren(reportsBody(reports));
    } catch (e) {
      if (mine !== seq) return;
      listEl.replaceChildren(failure('Could not load reports', e, refreshReports));
    }
  }

  function stats(p) {
    return [h('span', {}, plural(p.reportCount, 'report', 'reports')),
      p.todayNewReports > 0 ? h('span', { class: 'badge badge-today' }, `+${p.todayNewReports} today`) : ''];
  }

  function reportsBody(reports) {
    latest = reports;
    if (reports.length === 0) {
      return empty('No reports yet', 'Drop files on the area above, or choose them, to publish the first report of this project.');
    }
    const shown = reports.filter((r) => matches(r, chosen)).sort(newestFirst);
    const bar = filterBar(reports, chosen, (key, value) => {
      chosen[key] = value;
      listEl.replaceChildren(reportsBody(latest));
      listEl.querySelector(`#filter-${key}`)?.focus(); // keep the keyboard where it was
    });
    const list = shown.length
      ? h('ol', { class: 'reports', 'aria-label': 'Reports, newest first' }, shown.map((r) => reportRow(r, refreshReports)))
      : empty('No matching reports', 'No report of this project has that name and branch.');
    // The panel keeps its folded state across refreshes (an upload, a rename).
    const links = projectLinks(project || { id }, reports);
    links.open = Boolean(listEl?.querySelector('#project-links')?.open);
    return h('div', {}, trendsSection(id, reports), bar, list, links);
  }

  async function load() {
    let p, reports;
    try {
      [p, reports] = await Promise.all([api.getProject(id), api.listReports(id)]);
    } catch (e) {
      if (!heading.isConnected) return;
      heading.textContent = 'Project';
      main.lastChild.replaceWith(failure(e.type === 'NotFoundError' ? 'This project does not exist' : 'Could not load the project', e,
        e.type === 'NotFoundError' ? null : load));
      return;
    }
    // The user may have moved on while the request was out.
    if (!heading.isConnected) return;
    project = p;
    document.title = `${p.name} · reportd`;
    heading.textContent = p.name;
    statsEl = h('p', { class: 'project-stats' }, stats(p));
    listEl = h('div', { class: 'reports-body' }, reportsBody(reports));
    const edit = async () => {
      const saved = await editProject(project);
      if (!saved) return;
      project = saved;
      announce(`Saved “${saved.name}”.`);
      document.title = `${saved.name} · reportd`;
      heading.textContent = saved.name;
      head.replaceWith(head = headOf(saved));
    };
    const del = async () => {
      if (await deleteProject(project)) { announce(`Deleted “${project.name}”.`); location.hash = '#/'; }
    };
    const headOf = (q) => h('div', { class: 'project-head' },
      coverOf(q, 'project-cover'),
      h('div', { class: 'project-info' },
        q.description ? h('p', { class: 'project-desc' }, q.description) : h('p', { class: 'project-desc muted' }, 'No description'),
        statsEl),
      h('div', { class: 'project-actions' },
        h('button', { type: 'button', class: 'btn', id: 'edit-project', onclick: edit }, 'Edit project'),
        h('button', { type: 'button', class: 'btn btn-quiet-danger', id: 'delete-project', onclick: del }, 'Delete project')));
    let head = headOf(p);
    main.lastChild.replaceWith(h('div', { class: 'project' },
      head,
      uploader(id, refreshReports),
      h('h2', { class: 'section-title' }, 'Reports'),
      listEl));
  }

  load();
  return heading;
}
