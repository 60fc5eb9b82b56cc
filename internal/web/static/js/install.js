// "Install reportctl": the one-liner that installs the CLI from this very
// server (GET /dl/install.sh, version-matched, checksum verified), as
// Concourse offers fly from its web UI.

import { h } from './dom.js';
import { copyRow } from './links.js';

export function installPanel() {
  const site = new URL('.', location.href).href.replace(/\/$/, '');
  const cmd = `curl -fsSL ${site}/dl/install.sh | sh`;
  const withToken = `curl -fsSL -H "Authorization: Bearer $T" ${site}/dl/install.sh | sh -s -- --token "$T"`;
  return h('details', { class: 'stable-links install-reportctl', id: 'install-reportctl' },
    h('summary', {}, 'Install reportctl'),
    h('p', { class: 'hint' }, 'Publish from a shell or any CI with reportctl, at this server\u2019s version. Installs into ~/.local/bin (/usr/local/bin as root; --dir to choose).'),
    copyRow('install-cmd', 'Install reportctl', cmd),
    copyRow('install-cmd-token', 'When reading needs a token ($T)', withToken));
}
