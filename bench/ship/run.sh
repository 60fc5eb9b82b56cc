#!/usr/bin/env bash
# Issue 23 figures, printed as Markdown for BENCHMARKS.md:
#  1. size of each reportctl binary built stripped (-s -w, -trimpath, CGO off),
#     and of linux/amd64 at BEFORE (a git revision, optional) for comparison;
#  2. a fresh runner's time to its first published report: reportctl from the
#     server's /dl/install.sh vs a clone of this repository built with `go build`
#     with an empty HOME, so an empty build cache and module cache: the modules
#     come through the Go module proxy, as on a fresh CI runner.
# Usage: bash bench/ship/run.sh [BEFORE-REV]
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
before="${1:-}"
tmp=$(mktemp -d)
pid=""
trap '[ -z "$pid" ] || kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
export CGO_ENABLED=0

mb() { awk -v b="$1" 'BEGIN { printf "%.2f MB (%d bytes)", b / 1000000, b }'; }
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f s", b - a }'; }

echo "Load average before: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores; $(go version | cut -d' ' -f3-)"
echo
echo "| reportctl target | stripped size |"
echo "|---|---|"
for t in linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64; do
  GOOS=${t%/*} GOARCH=${t#*/} go build -trimpath -ldflags "-s -w" -o "$tmp/rc" ./cmd/reportctl
  echo "| $t | $(mb "$(stat -c %s "$tmp/rc")") |"
done
if [ -n "$before" ]; then
  mkdir "$tmp/before"
  git archive "$before" | tar -x -C "$tmp/before"
  (cd "$tmp/before" && go build -trimpath -ldflags "-s -w" -o "$tmp/rc-before" ./cmd/reportctl)
  echo "| linux/amd64 at $(git rev-parse --short "$before") (before) | $(mb "$(stat -c %s "$tmp/rc-before")") |"
fi
echo

# A server with this machine's reportctl in its clients.dir (as scripts/run.sh).
go build -trimpath -ldflags "-s -w" -o "$tmp/srv/" ./cmd/reportd ./cmd/reportctl
mkdir -p "$tmp/clients" "$tmp/data"
cp "$tmp/srv/reportctl" "$tmp/clients/reportctl-$(go env GOOS)-$(go env GOARCH)"
(cd "$tmp/clients" && sha256sum reportctl-* >checksums.txt)
REPORTD_CLIENTS_DIR="$tmp/clients" REPORTD_CONVERT_WARM_ON_START=false REPORTD_CONTENT_ADDR=127.0.0.1:0 \
  "$tmp/srv/reportd" serve --addr 127.0.0.1:0 --data-dir "$tmp/data" >"$tmp/reportd.log" 2>&1 &
pid=$!
for _ in $(seq 1 200); do
  url=$(sed -n 's/.*"url": *"\([^"]*\)".*/\1/p' "$tmp/data/reportd.serve.json" 2>/dev/null || true)
  [ -n "$url" ] && curl -fsS "$url/api/reports/ping" >/dev/null 2>&1 && break
  sleep 0.1
done
printf '# Bench\n' >"$tmp/r.md"

# Fresh runner, install script: an empty HOME, curl | sh, then the upload.
home="$tmp/home-install"
mkdir -p "$home"
t0=$(now)
curl -fsSL "$url/dl/install.sh" | HOME="$home" sh -s -- --dir "$home/bin" >/dev/null
t1=$(now)
HOME="$home" "$home/bin/reportctl" --server "$url" upload "$tmp/r.md" --project-name bench --create-project >/dev/null
t2=$(now)
install_line="| install script (curl \| sh) | $(secs "$t0" "$t1") | $(secs "$t0" "$t2") |"

# Fresh runner, from source: clone, build with an empty build cache, upload.
home="$tmp/home-src"
mkdir -p "$home"
t0=$(now)
git clone -q --depth 1 "file://$repo" "$tmp/src"
(cd "$tmp/src" && HOME="$home" GOPATH="$home/go" GOMODCACHE="$home/go/pkg/mod" GOCACHE="$tmp/gocache" GOFLAGS=-modcacherw \
  go build -o "$home/bin/reportctl" ./cmd/reportctl 2>/dev/null)
t1=$(now)
HOME="$home" "$home/bin/reportctl" --server "$url" upload "$tmp/r.md" --project-name bench --create-project >/dev/null
t2=$(now)
source_line="| git clone + go build (empty build and module caches) | $(secs "$t0" "$t1") | $(secs "$t0" "$t2") |"

echo "| fresh runner: reportctl from | install | to first published report |"
echo "|---|---|---|"
echo "$install_line"
echo "$source_line"
echo
echo "Load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
