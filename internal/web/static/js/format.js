// Formatting helpers. Times from the API are the daemon's local time with
// no zone (DESIGN.md), so they are shown exactly as sent, never shifted.

const dateFmt = new Intl.DateTimeFormat(undefined, {
  year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', timeZone: 'UTC',
});

function parseLocal(s) {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?/.exec(s || '');
  if (!m) return null;
  return new Date(Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +(m[6] || 0)));
}

export function formatTime(s) {
  const d = parseLocal(s);
  return d ? dateFmt.format(d) : (s || '');
}

// machineTime is the value for <time datetime>.
export function machineTime(s) {
  return parseLocal(s) ? s : '';
}

export function formatSize(n) {
  if (n < 1024) return n + ' B';
  if (n < 1024 * 1024) return (n / 1024).toFixed(1) + ' KB';
  return (n / 1024 / 1024).toFixed(1) + ' MB';
}

export function plural(n, one, many) {
  return n + ' ' + (n === 1 ? one : many);
}
