// The dashboard's only way to the daemon: the public API under /api, by
// document-relative URL ("api/..."), so that a reverse proxy may serve
// reportd under a path prefix ({site_url} = https://host/reports). Errors arrive as {error, type} (often with status 500 for
// everything, api-spec §7) and become ApiError with a readable message.

export class ApiError extends Error {
  constructor(message, type, status) {
    super(message);
    this.type = type;
    this.status = status;
  }
}

// errorFrom turns a failed response into an ApiError. The spec's `error`
// is "<Type>: <description>"; the description is what a person wants.
export function errorFrom(status, text) {
  let body = null;
  try { body = JSON.parse(text); } catch { /* not JSON: shown raw below */ }
  if (body && typeof body.error === 'string') {
    const type = typeof body.type === 'string' ? body.type : '';
    let msg = body.error;
    if (type && msg.startsWith(type + ': ')) msg = msg.slice(type.length + 2);
    return new ApiError(msg || type || 'Unknown error', type, status);
  }
  const snippet = (text || '').trim().slice(0, 200);
  return new ApiError(`The server answered ${status}${snippet ? ': ' + snippet : ''}`, 'HTTPError', status);
}

// The daemon may require a bearer token for changes (DESIGN.md, Auth).
// It is kept for this tab only, never in localStorage.
const TOKEN_KEY = 'reportd.token';
export const getToken = () => sessionStorage.getItem(TOKEN_KEY) || '';
export function setToken(t) {
  if (t) sessionStorage.setItem(TOKEN_KEY, t); else sessionStorage.removeItem(TOKEN_KEY);
}
function authHeaders(h) {
  const t = getToken();
  if (t) h.Authorization = 'Bearer ' + t;
  return h;
}
// noticeAuth turns refusals into something to act on: a missing, wrong,
// expired or revoked token (401) asks for one; a valid token that lacks
// the scope or project (403) keeps the daemon's message, which names what
// is missing ("token tok_… has scope read; creating a project needs scope
// admin"), and points at the token control.
// write says whether the refused request was a change (the prompt
// explains why a token is asked for: writes need one once the daemon has
// any token; reads only with auth.reads).
function noticeAuth(err, write = false) {
  if (err.type === 'UnauthorizedError') {
    const reason = err.message;
    // The daemon goes on to tell API clients which header to send; a
    // person needs what to do here instead.
    err.message = reason.replace(/^(a valid bearer token is required):.*$/s, '$1.') +
      (write ? ' Changes on this reportd need a token since one was set up for it; viewing does not.' : '') +
      ' Use “Enter API token” at the top of the page.';
    window.dispatchEvent(new CustomEvent('reportd:unauthorized', { detail: { message: reason, write } }));
  } else if (err.type === 'ForbiddenError') {
    const m = /needs scope (\w+)/.exec(err.message);
    err.message += m ? ` Enter a token with scope ${m[1]} under “API token set” at the top of the page.`
      : ' Enter a token that covers this project under “API token set” at the top of the page.';
    window.dispatchEvent(new CustomEvent('reportd:forbidden', { detail: { message: err.message } }));
  }
  return err;
}

const unreachable = () => new ApiError('Cannot reach reportd. Check that the daemon is running and try again.', 'NetworkError', 0);

async function send(method, path, { json, form, signal } = {}) {
  const init = { method, signal, headers: authHeaders({ Accept: 'application/json' }) };
  if (json !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(json);
  } else if (form) {
    init.body = form;
  }
  let res;
  try {
    res = await fetch('api' + path, init);
  } catch (e) {
    if (e.name === 'AbortError') throw e;
    throw unreachable();
  }
  const text = await res.text();
  if (!res.ok) throw noticeAuth(errorFrom(res.status, text), method !== 'GET' && method !== 'HEAD');
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    throw new ApiError('The server sent a response that is not JSON.', 'HTTPError', res.status);
  }
}

export const listProjects = () => send('GET', '/projects');
export const getProject = (id) => send('GET', `/projects/${id}`);
export const createProject = (body) => send('POST', '/projects', { json: body });
export const updateProject = (id, form) => send('PUT', `/projects/${id}`, { form });
export const deleteProject = (id) => send('DELETE', `/projects/${id}`);

export const listReports = (projectId) => send('GET', `/reports?projectId=${encodeURIComponent(projectId)}`);
export const getReport = (id) => send('GET', `/reports/${id}`);
export const renameReport = (id, fileName) => send('PUT', `/reports/${id}`, { json: { fileName } });
export const deleteReport = (id) => send('DELETE', `/reports/${id}`);
// compareReport is a report compared with a base: previous, branch:NAME or a report id.
export const compareReport = (id, base) => send('GET', `/reports/${id}/compare?base=${encodeURIComponent(base)}`);
// historySVG is the server-made trend chart of a report name (and branch)
// as an <svg> element to insert: inlined, its builds are keyboard links.
export async function historySVG(projectId, name, branch, chartId) {
  const q = new URLSearchParams({ name, format: 'svg', chartId, limit: '30' });
  if (branch) q.set('branch', branch);
  const text = await fetchText(`api/projects/${encodeURIComponent(projectId)}/history?${q}`);
  const doc = new DOMParser().parseFromString(text, 'image/svg+xml');
  const svg = doc.documentElement;
  if (svg.nodeName !== 'svg') throw new ApiError('The server sent a chart that is not SVG.', 'HTTPError', 200);
  return document.importNode(svg, true);
}
// listFiles is a report's file list: a site's files, or its one file.
export const listFiles = (id, signal) => send('GET', `/reports/${id}/files`, { signal });

export const previewURL = (id) => `api/reports/${id}/preview`;
export const downloadURL = (id) => `api/reports/${id}/download`;
export const pdfURL = (id) => `api/reports/${id}/pdf`;
export const htmlURL = (id) => `api/reports/${id}/html`;

// siteURL makes a path the API gives relative to {site_url} (coverImage,
// "/uploads/covers/...") fetchable from the dashboard at {site_url}/.
export const siteURL = (path) => path.replace(/^\/+/, '');

// fetchText and fetchBlob read a report's content, keeping API errors
// readable (an iframe pointed at a failing URL would show raw JSON).
export async function fetchText(url, signal) {
  let res;
  try { res = await fetch(url, { signal, headers: authHeaders({}) }); } catch (e) {
    if (e.name === 'AbortError') throw e;
    throw unreachable();
  }
  const text = await res.text();
  if (!res.ok) throw noticeAuth(errorFrom(res.status, text));
  return text;
}

export async function fetchBlob(url, signal) {
  let res;
  try { res = await fetch(url, { signal, headers: authHeaders({}) }); } catch (e) {
    if (e.name === 'AbortError') throw e;
    throw unreachable();
  }
  if (!res.ok) throw noticeAuth(errorFrom(res.status, await res.text()));
  return res.blob();
}

// uploadReport posts one file with XMLHttpRequest, which (unlike fetch)
// reports upload progress. onProgress gets a fraction in [0, 1].
export function uploadReport(file, projectId, fileType, onProgress) {
  const xhr = new XMLHttpRequest();
  const promise = new Promise((resolve, reject) => {
    xhr.open('POST', 'api/reports');
    for (const [k, v] of Object.entries(authHeaders({ Accept: 'application/json' }))) xhr.setRequestHeader(k, v);
    xhr.upload.onprogress = (e) => { if (e.lengthComputable) onProgress(e.loaded / e.total); };
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300) {
        onProgress(1);
        try { resolve(JSON.parse(xhr.responseText)); } catch { resolve(null); }
      } else {
        reject(noticeAuth(errorFrom(xhr.status, xhr.responseText), true));
      }
    };
    xhr.onerror = () => reject(unreachable());
    xhr.onabort = () => reject(new ApiError('Upload cancelled.', 'AbortError', 0));
    const form = new FormData();
    form.append('projectId', String(projectId));
    form.append('fileType', fileType);
    form.append('file', file, file.name);
    xhr.send(form);
  });
  return { promise, abort: () => xhr.abort() };
}
