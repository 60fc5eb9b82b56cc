#!/usr/bin/env bash
# Builds ./bin/reportd and ./bin/reportctl with the version stamped in.
set -euo pipefail
cd "$(dirname "$0")/.."
ver=$(git describe --tags --always --dirty 2>/dev/null || echo devel)
ldflags="-s -w -X github.com/reportd/reportd/internal/version.Version=${ver}"
mkdir -p bin
go build -trimpath -ldflags "$ldflags" -o bin/ ./cmd/reportd ./cmd/reportctl
