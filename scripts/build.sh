#!/usr/bin/env bash
# Builds ./bin/reportd and ./bin/reportctl with the version stamped in
# (scripts/version.sh; scripts/dist.sh builds the release artifacts).
set -euo pipefail
cd "$(dirname "$0")/.."
ver=$(bash scripts/version.sh)
ldflags="-s -w -X github.com/reportd/reportd/internal/version.Version=${ver}"
mkdir -p bin
go build -trimpath -ldflags "$ldflags" -o bin/ ./cmd/reportd ./cmd/reportctl
