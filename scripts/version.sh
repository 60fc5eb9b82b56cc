#!/usr/bin/env bash
# Prints the release version of this checkout (issue 23), the one string that
# scripts/build.sh and scripts/dist.sh stamp into reportd, reportctl and the
# .deb: `git describe --tags` on a tagged commit (a leading "v" dropped, as
# Debian versions start with a digit); otherwise 0.0.0+<n>.g<sha> with <n>
# from `git rev-list --count HEAD`, or 0.0.0+g<sha> in a shallow clone, where
# <n> is unknown. ".dirty" marks uncommitted changes. A plain `go build`
# stamps nothing and says "devel".
set -euo pipefail
cd "$(dirname "$0")/.."
if ! git rev-parse --verify -q HEAD >/dev/null 2>&1; then
  echo devel
  exit 0
fi
dirty=""
git diff --quiet HEAD -- 2>/dev/null || dirty=".dirty"
if tag=$(git describe --tags --exact-match HEAD 2>/dev/null); then
  v="${tag#v}"
  [ -z "$dirty" ] || v="$v+dirty"
  echo "$v"
  exit 0
fi
sha=$(git rev-parse --short=12 HEAD)
if [ "$(git rev-parse --is-shallow-repository)" = true ]; then
  echo "0.0.0+g$sha$dirty"
else
  echo "0.0.0+$(git rev-list --count HEAD).g$sha$dirty"
fi
