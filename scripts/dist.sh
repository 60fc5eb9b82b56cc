#!/usr/bin/env bash
# Builds the release artifacts into dist/ (git-ignored), reproducibly from
# the commit (issue 23; `make dist` runs this):
#   reportctl_<v>_<os>_<arch>.tar.gz (linux, darwin; amd64, arm64), reportctl_<v>_windows_amd64.zip,
#   reportd_<v>_linux_<arch>.tar.gz and reportd_<v>_<arch>.deb (amd64, arm64),
#   <program>_<v>_<os>_<arch>.cdx.json (CycloneDX SBOM per binary), checksums.txt,
#   and clients/ (reportctl for every platform, reportd's clients.dir).
# <v> is scripts/version.sh. Binaries: CGO off, -trimpath, no build id,
# stripped; archive and package times are SOURCE_DATE_EPOCH, the commit's time.
# The packer (scripts/dist: nFPM, cyclonedx-gomod) is pinned in its own
# go.mod. Modules come from the Go module cache, filled through the module
# proxy the first time; after that no step needs the network.
#
# DIST_DIR (default dist) picks the folder; DIST_ONLY a comma-separated
# subset (reportctl-<os>-<arch>, reportd-<arch>, deb-<arch>, sbom) for tests.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
out="${DIST_DIR:-dist}"
case "$out" in /*) ;; *) out="$repo/$out" ;; esac
only="${DIST_ONLY:-}"

version=$(bash scripts/version.sh)
SOURCE_DATE_EPOCH=$(git log -1 --format=%ct)
export SOURCE_DATE_EPOCH
export CGO_ENABLED=0 GOFLAGS="-mod=readonly -buildvcs=false"

# Fill the module cache (a no-op when it has everything), then go offline.
if ! GOPROXY=off go mod download >/dev/null 2>&1 || ! (cd scripts/dist && GOPROXY=off go mod download >/dev/null 2>&1); then
  echo "dist: fetching modules into the Go module cache" >&2
  go mod download
  (cd scripts/dist && go mod download)
fi
export GOPROXY=off

case "$out" in / | "$repo" | "$HOME") echo "dist: refusing to empty $out" >&2; exit 2 ;; esac
rm -rf "$out"
mkdir -p "$out/build" "$out/tools"

wants() { [ -z "$only" ] || [[ ",$only," == *",$1,"* ]]; }

ldflags="-s -w -buildid= -X github.com/reportd/reportd/internal/version.Version=$version"
build() { # GOOS GOARCH PROGRAM...
  local goos=$1 goarch=$2
  shift 2
  local cmds=()
  for p in "$@"; do cmds+=("./cmd/$p"); done
  echo "dist: go build $goos/$goarch: $*" >&2
  GOOS=$goos GOARCH=$goarch go build -trimpath -ldflags "$ldflags" -o "$out/build/${goos}_${goarch}/" "${cmds[@]}"
}

# What each artifact needs: a .deb holds reportctl for every platform.
declare -A need=()
for t in linux-amd64 linux-arm64 darwin-amd64 darwin-arm64 windows-amd64; do
  if wants "reportctl-$t" || wants deb-amd64 || wants deb-arm64; then need[$t]="reportctl"; fi
done
for a in amd64 arm64; do
  if wants "reportd-$a" || wants "deb-$a"; then need[linux-$a]="${need[linux-$a]:-reportctl} reportd"; fi
done
for t in $(printf '%s\n' "${!need[@]}" | sort); do
  # shellcheck disable=SC2086
  build "${t%-*}" "${t#*-}" ${need[$t]}
done

cyclonedx=""
if wants sbom; then
  (cd scripts/dist && go build -trimpath -o "$out/tools/" github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod)
  cyclonedx="$out/tools/cyclonedx-gomod"
fi
(cd scripts/dist && go build -trimpath -o "$out/tools/dist" .)
"$out/tools/dist" -repo "$repo" -out "$out" -version "$version" -cyclonedx "$cyclonedx" -only "$only"
rm -rf "$out/build" "$out/tools"
echo "dist: $version in $out:" >&2
ls -l "$out" >&2
