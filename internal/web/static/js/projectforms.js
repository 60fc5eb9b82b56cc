// Create, edit and delete dialogs for projects, shared by the project list
// and the project page.

import * as api from './api.js';
import { h } from './dom.js';
import { confirmAction, field, formDialog, invalid } from './dialog.js';
import { plural } from './format.js';
import { COVER_TYPES } from './types.js';

const MAX_COVER = 10 * 1024 * 1024;

function readDataURL(file) {
  return new Promise((resolve, reject) => {
    const r = new FileReader();
    r.onload = () => resolve(r.result);
    r.onerror = () => reject(new Error(`Could not read ${file.name}.`));
    r.readAsDataURL(file);
  });
}

// coverPicker is a file input with a preview of the chosen image.
function coverPicker(current) {
  const input = h('input', { type: 'file', name: 'coverFile', accept: COVER_TYPES.join(',') });
  const img = h('img', { class: 'cover-preview', alt: '', hidden: !current, src: current || undefined });
  let url = null;
  input.addEventListener('change', () => {
    const f = input.files[0];
    if (url) URL.revokeObjectURL(url);
    url = null;
    if (f && COVER_TYPES.includes(f.type)) {
      url = URL.createObjectURL(f);
      img.src = url;
      img.hidden = false;
    } else {
      img.hidden = !current;
      if (current) img.src = current;
    }
  });
  return { input, img };
}

function checkCover(input) {
  const f = input.files[0];
  if (!f) return null;
  if (!COVER_TYPES.includes(f.type)) invalid(input, `${f.name} is not a PNG, JPEG, GIF or WebP image.`);
  if (f.size > MAX_COVER) invalid(input, `${f.name} is larger than 10 MB.`);
  return f;
}

// createProject asks for name, description and a cover (file or URL) and
// POSTs them as JSON; a chosen file travels as a data URL.
export function createProject() {
  const name = h('input', { type: 'text', name: 'name', required: true, maxlength: 200, autocomplete: 'off', autofocus: true });
  const desc = h('textarea', { name: 'description', rows: 3, maxlength: 5000 });
  const cover = coverPicker(null);
  const url = h('input', { type: 'url', name: 'coverUrl', placeholder: 'https://…', inputmode: 'url' });
  return formDialog({
    title: 'New project',
    submitLabel: 'Create project',
    fields: [
      field({ label: 'Name', control: name }),
      field({ label: 'Description (optional)', control: desc }),
      h('fieldset', { class: 'cover-field' },
        h('legend', {}, 'Cover image (optional)'),
        cover.img,
        field({ label: 'Image file', control: cover.input, hint: 'PNG, JPEG, GIF or WebP, up to 10 MB.' }),
        field({ label: 'or image URL', control: url, hint: 'reportd downloads it; used when no file is chosen.' })),
    ],
    async submit() {
      const body = { name: name.value.trim() };
      if (!body.name) invalid(name, 'A project needs a name.');
      if (desc.value.trim()) body.description = desc.value.trim();
      const file = checkCover(cover.input);
      const link = url.value.trim();
      if (file) body.coverImage = await readDataURL(file);
      else if (link) {
        if (!/^https?:\/\/\S+$/i.test(link)) invalid(url, 'The image URL must start with http:// or https://.');
        body.coverImage = link;
      }
      return api.createProject(body);
    },
  });
}

// editProject sends only what changed, as multipart (api-spec §4 PUT).
export function editProject(p) {
  const name = h('input', { type: 'text', name: 'name', required: true, maxlength: 200, autocomplete: 'off', value: p.name, autofocus: true });
  const desc = h('textarea', { name: 'description', rows: 3, maxlength: 5000 });
  desc.value = p.description || '';
  const cover = coverPicker(p.coverImage ? api.siteURL(p.coverImage) : null);
  return formDialog({
    title: 'Edit project',
    submitLabel: 'Save changes',
    fields: [
      field({ label: 'Name', control: name }),
      field({ label: 'Description', control: desc }),
      h('fieldset', { class: 'cover-field' },
        h('legend', {}, 'Cover image'),
        cover.img,
        field({ label: p.coverImage ? 'Replace with file' : 'Image file', control: cover.input, hint: 'PNG, JPEG, GIF or WebP, up to 10 MB.' })),
    ],
    async submit() {
      const form = new FormData();
      const n = name.value.trim();
      if (!n) invalid(name, 'A project needs a name.');
      if (n !== p.name) form.append('name', n);
      if (desc.value.trim() !== (p.description || '')) form.append('description', desc.value.trim());
      const file = checkCover(cover.input);
      if (file) form.append('coverImage', file, file.name);
      if ([...form.keys()].length === 0) return p;
      return api.updateProject(p.id, form);
    },
  });
}

// deleteProject states how many reports go with the project, counted
// afresh so an upload since the list loaded is not left out.
export async function deleteProject(p) {
  let count = p.reportCount;
  try { count = (await api.getProject(p.id)).reportCount; } catch { /* the list's count will do */ }
  const what = count > 0
    ? [`Delete “${p.name}” and its `, h('strong', {}, plural(count, 'report', 'reports')), '? This cannot be undone.']
    : [`Delete “${p.name}”? It has no reports. This cannot be undone.`];
  return confirmAction({
    title: 'Delete project',
    message: h('p', {}, what),
    confirmLabel: count > 0 ? `Delete project and ${plural(count, 'report', 'reports')}` : 'Delete project',
    run: () => api.deleteProject(p.id),
  });
}
