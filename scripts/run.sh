#!/usr/bin/env bash
# Installs what is missing, builds reportd and reportctl into ./bin, and
# starts reportd with the embedded defaults: bbolt + ./data on 127.0.0.1:8080,
# serving this machine's reportctl from ./bin/clients at /dl/.
# Extra arguments go to `reportd serve` (e.g. --addr 0.0.0.0:8080, which also
# needs REPORTD_AUTH_TOKEN (24+ characters: openssl rand -base64 32) or
# REPORTD_AUTH_ANONYMOUS=true, and REPORTD_ALLOWED_HOSTS
# for the names clients use; see docs/operations.md, "Exposing reportd").
set -euo pipefail
cd "$(dirname "$0")/.."
echo "run: checking the system packages reportd needs (scripts/install-deps.sh run)..." >&2
bash scripts/install-deps.sh run
bash scripts/build.sh
# reportctl for this machine, served at /dl/ (the dashboard's "Install
# reportctl" one-liner); release builds serve every platform (scripts/dist.sh).
ext=""
[ "$(go env GOOS)" != windows ] || ext=.exe
mkdir -p bin/clients
cp bin/reportctl$ext "bin/clients/reportctl-$(go env GOOS)-$(go env GOARCH)$ext"
(cd bin/clients && sha256sum reportctl-* >checksums.txt)
export REPORTD_CLIENTS_DIR="${REPORTD_CLIENTS_DIR:-$PWD/bin/clients}"
echo "run: starting ./bin/reportd serve $*" >&2
exec ./bin/reportd serve "$@"
