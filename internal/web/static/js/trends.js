// A project's trends: one server-made SVG chart per report name and
// branch (GET /api/projects/{id}/history?format=svg), newest identities
// first. The SVG is inlined so its builds are links the keyboard reaches.

import * as api from './api.js';
import { h } from './dom.js';

// At most this many charts on a project page (the newest identities).
const MAX_CHARTS = 6;

// identities are the (name, branch) pairs of reports, the most recently
// uploaded first.
function identities(reports) {
  const seen = new Map();
  for (const r of [...reports].sort((a, b) => b.id - a.id)) {
    if (!r.name) continue;
    const key = JSON.stringify([r.name, r.branch || '']);
    if (!seen.has(key)) seen.set(key, { name: r.name, branch: r.branch || '' });
  }
  return [...seen.values()].slice(0, MAX_CHARTS);
}

// trendsSection returns the section (null when there is nothing to chart)
// and fills each chart in as its SVG arrives.
export function trendsSection(projectId, reports) {
  const ids = identities(reports);
  if (!ids.length) return null;
  const figures = ids.map(({ name, branch }, i) => {
    const caption = branch ? `${name} on ${branch}` : name;
    const fig = h('figure', { class: 'trend', 'data-name': name, 'data-branch': branch },
      h('figcaption', {}, caption), h('div', { class: 'trend-svg', 'aria-busy': 'true' }, 'Loading chart…'));
    api.historySVG(projectId, name, branch, `trend-${i}`).then((svg) => {
      const box = fig.querySelector('.trend-svg');
      box.replaceChildren(svg);
      box.removeAttribute('aria-busy');
    }, (e) => {
      const box = fig.querySelector('.trend-svg');
      box.replaceChildren(h('p', { class: 'error-text' }, `Could not load the chart: ${e.message}`));
      box.removeAttribute('aria-busy');
    });
    return fig;
  });
  return h('section', { class: 'trends', 'aria-labelledby': 'trends-title' },
    h('h2', { class: 'section-title', id: 'trends-title' }, 'Trends'),
    h('p', { class: 'muted trend-legend' }, 'Bars: passed, failed and skipped tests; line: line coverage. Each build opens its report.'),
    h('div', { class: 'trend-grid' }, figures));
}
