#!/usr/bin/env bash
# Builds ./bin/reportd and ./bin/reportctl with the version stamped in
# (scripts/version.sh; scripts/dist.sh builds the release artifacts).
set -euo pipefail
cd "$(dirname "$0")/.."
ver=$(bash scripts/version.sh)
ldflags="-s -w -X github.com/reportd/reportd/internal/version.Version=${ver}"
mkdir -p bin
# The first build downloads the modules and compiles every dependency, which
# takes minutes on a small machine: say so, and say when it is done.
echo "build: compiling reportd and reportctl ($ver) into ./bin; the first build downloads the Go modules" \
  "and compiles every dependency (a few minutes), later ones take seconds..." >&2
start=$SECONDS
go build -trimpath -ldflags "$ldflags" -o bin/ ./cmd/reportd ./cmd/reportctl
echo "build: done in $((SECONDS - start)) s: bin/reportd, bin/reportctl" >&2
