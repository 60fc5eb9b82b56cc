// The report types the API accepts (api-spec §4) and how they are shown.

export const TYPES = {
  html: { label: 'HTML', name: 'HTML page' },
  md: { label: 'MD', name: 'Markdown document' },
  pdf: { label: 'PDF', name: 'PDF document' },
  ppt: { label: 'PPT', name: 'PowerPoint presentation' },
  pptx: { label: 'PPTX', name: 'PowerPoint presentation' },
};

export const ACCEPT = '.html,.md,.pdf,.ppt,.pptx';

// typeOf infers the fileType from the extension, as the daemon checks it:
// case-insensitive, exactly one of the five.
export function typeOf(name) {
  const m = /\.([A-Za-z]+)$/.exec(name || '');
  if (!m) return null;
  const ext = m[1].toLowerCase();
  return Object.hasOwn(TYPES, ext) ? ext : null;
}

export const COVER_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'];
