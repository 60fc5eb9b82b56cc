// The report types the API accepts (api-spec §4) and how they are shown:
// the daemon's type table (internal/report/typetable.go), held to it by
// TestTypeTableDrift.

export const TYPES = {
  html: { label: 'HTML', name: 'HTML page' },
  md: { label: 'MD', name: 'Markdown document' },
  pdf: { label: 'PDF', name: 'PDF document' },
  ppt: { label: 'PPT', name: 'PowerPoint presentation' },
  pptx: { label: 'PPTX', name: 'PowerPoint presentation' },
};

// An archive of a whole HTML site (htmlcov/, playwright-report/, …) is
// published as one site report of fileType html; the daemon recognises
// it by content (zip, gzip, zstd, tar), the name only picks the check here.
export const SITE_ARCHIVE = /\.(zip|tar\.gz|tgz|tar\.zst|tzst|tar)$/i;

export const ACCEPT = '.html,.md,.pdf,.ppt,.pptx,.zip,.tar.gz,.tgz,.tar.zst,.tzst,.tar';

// typeOf infers the fileType from the extension, as the daemon checks it:
// case-insensitive, exactly one of the five.
export function typeOf(name) {
  const m = /\.([A-Za-z]+)$/.exec(name || '');
  if (!m) return null;
  const ext = m[1].toLowerCase();
  return Object.hasOwn(TYPES, ext) ? ext : null;
}

export const COVER_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'];
