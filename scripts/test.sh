#!/usr/bin/env bash
# Installs what is missing (engines, fonts, poppler) and runs every test:
# vet, the race-enabled test suite, and the fuzz seed corpora (which
# `go test` runs as ordinary tests).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh test
test -z "$(gofmt -l $(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $(git ls-files '*.go'); exit 1; }
go vet ./...
# reportctl ships for macOS and Windows too (scripts/dist.sh): it must build there.
for t in darwin/arm64 windows/amd64; do GOOS=${t%/*} GOARCH=${t#*/} go vet ./cmd/reportctl; done
# Daemons that tests start need no warm engines unless a test converts;
# engines then start on the first job. Conversion tests start them explicitly.
export REPORTD_CONVERT_WARM_ON_START=false
go test -race -timeout 30m -count=1 ./... "$@"
