// A small Markdown renderer (CommonMark's common core plus GFM tables,
// strikethrough and task lists) that builds DOM nodes directly. Text only
// ever becomes text nodes, so a report cannot inject markup or script:
// raw HTML in the source is shown as text, links are limited to http(s),
// mailto and in-page anchors, and images to data: and same-origin URLs
// (the dashboard's CSP would block others anyway).

import { h } from './dom.js';

export function renderMarkdown(src) {
  const frag = document.createDocumentFragment();
  const lines = src.replace(/\r\n?/g, '\n').replace(/\t/g, '    ').split('\n');
  const slugs = new Map();
  blocks(lines, frag, slugs);
  return frag;
}

const reFence = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)[^`]*$/;
const reHeading = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const reHr = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const reQuote = /^ {0,3}> ?(.*)$/;
const reBullet = /^( {0,3})([-*+])( +|$)(.*)$/;
const reOrdered = /^( {0,3})(\d{1,9})([.)])( +|$)(.*)$/;
const reTableSep = /^ {0,3}\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;
const blank = (l) => /^\s*$/.test(l);

function startsBlock(line) {
  return reFence.test(line) || reHeading.test(line) || reHr.test(line) || reQuote.test(line) ||
    reBullet.test(line) || reOrdered.test(line);
}

function blocks(lines, parent, slugs) {
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (blank(line)) { i++; continue; }
    let m;
    if ((m = reFence.exec(line))) {
      const fence = m[1];
      const body = [];
      i++;
      while (i < lines.length && !new RegExp('^ {0,3}' + fence[0] + '{' + fence.length + ',}\\s*$').test(lines[i])) body.push(lines[i++]);
      i++;
      const code = h('code', { class: m[2] ? 'language-' + m[2].replace(/[^\w-]/g, '') : null }, body.join('\n'));
      parent.append(h('pre', {}, code));
      continue;
    }
    if ((m = reHeading.exec(line))) {
      parent.append(heading(m[1].length, m[2] || '', slugs));
      i++;
      continue;
    }
    if (reHr.test(line)) { parent.append(h('hr')); i++; continue; }
    if (reQuote.test(line)) {
      const inner = [];
      while (i < lines.length && !blank(lines[i])) {
        const q = reQuote.exec(lines[i]);
        inner.push(q ? q[1] : lines[i]);
        i++;
      }
      const bq = h('blockquote');
      blocks(inner, bq, slugs);
      parent.append(bq);
      continue;
    }
    if (reBullet.test(line) || reOrdered.test(line)) { i = list(lines, i, parent, slugs); continue; }
    if (/^ {4}/.test(line)) {
      const body = [];
      while (i < lines.length && (/^ {4}/.test(lines[i]) || blank(lines[i]))) body.push(lines[i++].slice(4));
      while (body.length && blank(body[body.length - 1])) body.pop();
      parent.append(h('pre', {}, h('code', {}, body.join('\n'))));
      continue;
    }
    if (line.includes('|') && i + 1 < lines.length && reTableSep.test(lines[i + 1]) && lines[i + 1].includes('-')) {
      i = table(lines, i, parent);
      continue;
    }
    // Paragraph, possibly closed by a setext underline.
    const para = [line.replace(/^\s+/, '')];
    i++;
    let level = 0;
    while (i < lines.length && !blank(lines[i])) {
      if (/^ {0,3}=+\s*$/.test(lines[i])) { level = 1; i++; break; }
      if (/^ {0,3}-+\s*$/.test(lines[i])) { level = 2; i++; break; }
      if (startsBlock(lines[i])) break;
      para.push(lines[i].replace(/^\s+/, ''));
      i++;
    }
    const text = para.join('\n');
    parent.append(level ? heading(level, text, slugs) : h('p', {}, inline(text)));
  }
}

function heading(level, text, slugs) {
  const el = h('h' + level, {}, inline(text.trim()));
  let slug = el.textContent.toLowerCase().trim().replace(/[^\p{L}\p{N}\s-]/gu, '').replace(/\s+/g, '-') || 'section';
  const n = slugs.get(slug) || 0;
  slugs.set(slug, n + 1);
  if (n) slug += '-' + n;
  el.id = 'md-' + slug;
  return el;
}

function list(lines, i, parent, slugs) {
  const first = reOrdered.exec(lines[i]);
  const ordered = !!first;
  const marker = ordered ? first[3] : reBullet.exec(lines[i])[2];
  const el = ordered ? h('ol', { start: +first[2] !== 1 ? +first[2] : null }) : h('ul');
  let loose = false;
  const items = [];
  while (i < lines.length) {
    const m = ordered ? reOrdered.exec(lines[i]) : reBullet.exec(lines[i]);
    if (!m || (ordered ? m[3] : m[2]) !== marker) break;
    const width = ordered ? m[1].length + m[2].length + 1 + Math.min(m[4].length || 1, 4) : m[1].length + 1 + Math.min(m[3].length || 1, 4);
    const body = [ordered ? m[5] : m[4]];
    i++;
    let sawBlank = false;
    while (i < lines.length) {
      const l = lines[i];
      if (blank(l)) { sawBlank = true; body.push(''); i++; continue; }
      const indent = /^ */.exec(l)[0].length;
      if (indent >= width) { if (sawBlank) loose = true; body.push(l.slice(width)); sawBlank = false; i++; continue; }
      // A lazy continuation line belongs to the item's paragraph.
      if (!sawBlank && !startsBlock(l)) { body.push(l.trim()); i++; continue; }
      break;
    }
    while (body.length && blank(body[body.length - 1])) body.pop();
    items.push(body);
    if (sawBlank && i < lines.length && (ordered ? reOrdered : reBullet).test(lines[i])) loose = true;
  }
  for (const body of items) {
    const li = h('li');
    const task = /^\[([ xX])\]\s+/.exec(body[0]);
    if (task) {
      body[0] = body[0].slice(task[0].length);
      li.className = 'task';
      li.append(h('input', { type: 'checkbox', disabled: true, checked: task[1] !== ' ', 'aria-label': task[1] !== ' ' ? 'done' : 'not done' }), ' ');
    }
    const tmp = document.createDocumentFragment();
    blocks(body, tmp, slugs);
    // Tight lists show their paragraphs without <p> margins.
    if (!loose) {
      for (const n of [...tmp.childNodes]) if (n.nodeName === 'P') n.replaceWith(...n.childNodes);
    }
    li.append(tmp);
    el.append(li);
  }
  parent.append(el);
  return i;
}

function splitRow(line) {
  let s = line.trim();
  if (s.startsWith('|')) s = s.slice(1);
  if (s.endsWith('|') && !s.endsWith('\\|')) s = s.slice(0, -1);
  const cells = [];
  let cur = '';
  let code = false;
  for (let k = 0; k < s.length; k++) {
    const c = s[k];
    if (c === '\\' && s[k + 1] === '|') { cur += '|'; k++; continue; }
    if (c === '`') code = !code;
    if (c === '|' && !code) { cells.push(cur.trim()); cur = ''; continue; }
    cur += c;
  }
  cells.push(cur.trim());
  return cells;
}

function table(lines, i, parent) {
  const head = splitRow(lines[i]);
  const aligns = splitRow(lines[i + 1]).map((c) => (c.startsWith(':') && c.endsWith(':') ? 'center' : c.endsWith(':') ? 'right' : c.startsWith(':') ? 'left' : null));
  i += 2;
  const cell = (tag, text, k) => h(tag, { class: aligns[k] ? 'align-' + aligns[k] : null }, inline(text || ''));
  const thead = h('thead', {}, h('tr', {}, head.map((c, k) => cell('th', c, k))));
  const tbody = h('tbody');
  while (i < lines.length && !blank(lines[i]) && lines[i].includes('|')) {
    const row = splitRow(lines[i++]);
    tbody.append(h('tr', {}, head.map((_, k) => cell('td', row[k], k))));
  }
  parent.append(h('div', { class: 'table-wrap' }, h('table', {}, thead, tbody)));
  return i;
}

function safeHref(url) {
  const u = url.trim();
  if (/^(https?:|mailto:)/i.test(u)) return u;
  if (/^#[^/]/.test(u)) return u;
  return null;
}

function safeImg(url) {
  const u = url.trim();
  if (/^data:image\/(png|jpeg|gif|webp);/i.test(u)) return u;
  if (/^\/(?!\/)/.test(u)) return u;
  return null;
}

// inline renders emphasis, code, links, images and breaks of one block.
function inline(text) {
  const out = [];
  let buf = '';
  const flush = () => { if (buf) { out.push(document.createTextNode(buf)); buf = ''; } };
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text[i];
    if (c === '\\' && i + 1 < n) {
      if (text[i + 1] === '\n') { flush(); out.push(h('br')); i += 2; continue; }
      if (/[!-/:-@[-`{-~]/.test(text[i + 1])) { buf += text[i + 1]; i += 2; continue; }
    }
    if (c === '`') {
      let run = 1;
      while (text[i + run] === '`') run++;
      const close = findRun(text, '`', run, i + run);
      if (close >= 0) {
        flush();
        let code = text.slice(i + run, close).replace(/\n/g, ' ');
        if (/^ .* $/.test(code) && code.trim()) code = code.slice(1, -1);
        out.push(h('code', {}, code));
        i = close + run;
        continue;
      }
      buf += '`'.repeat(run);
      i += run;
      continue;
    }
    if ((c === '!' && text[i + 1] === '[') || c === '[') {
      const img = c === '!';
      const link = parseLink(text, img ? i + 1 : i);
      if (link) {
        flush();
        if (img) {
          const src = safeImg(link.url);
          out.push(src ? h('img', { src, alt: link.text, title: link.title || null, loading: 'lazy' })
            : h('span', { class: 'md-img-blocked' }, `[image: ${link.text || link.url}]`));
        } else {
          const href = safeHref(link.url);
          const kids = inline(link.text);
          out.push(href ? h('a', { href, title: link.title || null, rel: href.startsWith('#') ? null : 'noopener noreferrer', target: href.startsWith('#') ? null : '_blank' }, kids)
            : h('span', { class: 'md-link-blocked', title: link.url }, kids));
        }
        i = link.end;
        continue;
      }
    }
    if (c === '<') {
      const m = /^<((?:https?:\/\/|mailto:)[^\s<>]+)>/i.exec(text.slice(i));
      if (m) {
        flush();
        out.push(h('a', { href: m[1], rel: 'noopener noreferrer', target: '_blank' }, m[1].replace(/^mailto:/i, '')));
        i += m[0].length;
        continue;
      }
    }
    if (c === '*' || c === '_' || c === '~') {
      let run = 1;
      while (text[i + run] === c) run++;
      const size = c === '~' ? (run >= 2 ? 2 : 0) : Math.min(run, 2);
      const prev = text[i - 1] || ' ';
      const next = text[i + size] || ' ';
      const wordy = c === '_' && /[\p{L}\p{N}]/u.test(prev);
      if (size && !/\s/.test(next) && !wordy) {
        const close = findDelim(text, c, size, i + size);
        if (close > i + size) {
          flush();
          const tag = c === '~' ? 'del' : size === 2 ? 'strong' : 'em';
          out.push(h(tag, {}, inline(text.slice(i + size, close))));
          i = close + size;
          continue;
        }
      }
      buf += text.slice(i, i + run);
      i += run;
      continue;
    }
    if (c === '\n') {
      if (/ {2,}$/.test(buf)) { buf = buf.replace(/ +$/, ''); flush(); out.push(h('br')); } else buf = buf.replace(/ +$/, '') + '\n';
      i++;
      continue;
    }
    buf += c;
    i++;
  }
  flush();
  return out;
}

function findRun(text, ch, run, from) {
  for (let k = from; k < text.length; k++) {
    if (text[k] !== ch) continue;
    let r = 1;
    while (text[k + r] === ch) r++;
    if (r === run) return k;
    k += r - 1;
  }
  return -1;
}

// findDelim finds the closer of an emphasis run of `size` delimiters:
// not preceded by space, skipping code spans and escapes.
function findDelim(text, ch, size, from) {
  for (let k = from; k < text.length; k++) {
    const c = text[k];
    if (c === '\\') { k++; continue; }
    if (c === '`') {
      let r = 1;
      while (text[k + r] === '`') r++;
      const close = findRun(text, '`', r, k + r);
      if (close >= 0) { k = close + r - 1; continue; }
      k += r - 1;
      continue;
    }
    if (c !== ch) continue;
    let r = 1;
    while (text[k + r] === ch) r++;
    if (r >= size && !/\s/.test(text[k - 1])) {
      if (ch === '_' && /[\p{L}\p{N}]/u.test(text[k + r] || '')) { k += r - 1; continue; }
      // For a run longer than needed, the closer is its last `size`.
      if (size === 1 && r === 2) { k += r - 1; continue; }
      return k + (r - size);
    }
    k += r - 1;
  }
  return -1;
}

// parseLink reads [text](url "title") starting at the '['.
function parseLink(text, at) {
  let depth = 0;
  let k = at;
  for (; k < text.length; k++) {
    const c = text[k];
    if (c === '\\') { k++; continue; }
    if (c === '[') depth++;
    else if (c === ']' && --depth === 0) break;
  }
  if (depth !== 0 || text[k + 1] !== '(') return null;
  const label = text.slice(at + 1, k);
  let j = k + 2;
  while (text[j] === ' ') j++;
  let url = '';
  if (text[j] === '<') {
    const end = text.indexOf('>', j);
    if (end < 0) return null;
    url = text.slice(j + 1, end);
    j = end + 1;
  } else {
    let paren = 0;
    for (; j < text.length; j++) {
      const c = text[j];
      if (c === '\\' && j + 1 < text.length) { url += text[++j]; continue; }
      if (/\s/.test(c)) break;
      if (c === '(') paren++;
      if (c === ')') { if (paren === 0) break; paren--; }
      url += c;
    }
  }
  while (/\s/.test(text[j] || '')) j++;
  let title = '';
  const q = text[j];
  if (q === '"' || q === "'" || q === '(') {
    const closeQ = q === '(' ? ')' : q;
    const end = text.indexOf(closeQ, j + 1);
    if (end < 0) return null;
    title = text.slice(j + 1, end);
    j = end + 1;
    while (text[j] === ' ') j++;
  }
  if (text[j] !== ')') return null;
  return { text: label, url, title, end: j + 1 };
}
