#!/usr/bin/env bash
# Installs the Debian packages reportd needs to build, run and test, skipping
# what is already there. Idempotent; needs root (or sudo) only when something
# is missing.
set -euo pipefail

# runtime: the PDF engines, their sandbox (bubblewrap) and fonts; test: poppler (pdftotext/pdfinfo),
# python3-coverage (real coverage.py output for internal/detect) and Debian's PostgreSQL
# (internal/testserver starts a throwaway server on loopback for internal/pgstore),
# plus versitygw, an S3 server built with `go install` (internal/testserver starts it on
# loopback for internal/blob/s3store), lintian (the .deb test in internal/release) and nginx
# (internal/daemon runs the shipped examples/content-origin/nginx.conf with its proxy_cache
# in front of reportd; bench compares against it); bench: wrk for side-by-side serving figures.
# test also needs Node.js and npm (Debian's, only when no node is on PATH) and the report
# generators internal/sitegen runs (pinned npm packages, see the end of this script);
# libreoffice-writer-nogui: internal/daemon's TestTypeRowEndToEnd converts a test-only
# docx row of the type table through Writer.
runtime=(chromium-headless-shell libreoffice-impress-nogui python3-uno bubblewrap
  fonts-noto-cjk fonts-dejavu-core fonts-liberation2 fonts-crosextra-carlito
  fonts-noto-color-emoji)
test=(poppler-utils python3-coverage postgresql lintian nginx-light libreoffice-writer-nogui)
bench=(wrk)

want=("${runtime[@]}")
case "${1:-run}" in
  run) ;;
  test) want+=("${test[@]}") ;;
  bench) want+=("${test[@]}" "${bench[@]}") ;;
  *) echo "usage: $0 [run|test|bench]" >&2; exit 2 ;;
esac

if [ "${1:-run}" != run ] && ! command -v node >/dev/null; then
  want+=(nodejs npm)
fi

missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "installing: ${missing[*]}" >&2
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends "${missing[@]}"
fi
command -v go >/dev/null || { echo "Go 1.26+ is required: https://go.dev/dl/" >&2; exit 1; }

# versitygw (tests only): found where internal/testserver looks, on PATH or in
# GOBIN / GOPATH/bin, at this version, else built there by `go install`.
versitygw=v1.8.0
if [ "${1:-run}" != run ]; then
  gobin="$(go env GOBIN)"
  [ -n "$gobin" ] || gobin="$(go env GOPATH | cut -d: -f1)/bin"
  have=""
  for b in "$(command -v versitygw || true)" "$gobin/versitygw"; do
    [ -n "$b" ] && [ -x "$b" ] || continue
    if go version -m "$b" 2>/dev/null | awk '$1 == "mod" && $2 == "github.com/versity/versitygw" { print $3 }' | grep -qx "$versitygw"; then
      have="$b"
      break
    fi
  done
  if [ -z "$have" ]; then
    echo "installing: versitygw $versitygw (go install, into $gobin)" >&2
    (cd / && GOBIN="$gobin" go install "github.com/versity/versitygw/cmd/versitygw@$versitygw")
  fi
fi

# Report generators (tests only): real c8, mocha + mochawesome, the Playwright
# HTML reporter and Allure 3 with its Playwright adapter, at these versions, in a cache
# folder outside the repository where internal/sitegen looks (REPORTD_NPM, else
# ${XDG_CACHE_HOME:-$HOME/.cache}/reportd-npm). No browser is downloaded: the
# generated Playwright tests use no page. Skipped when every pinned version is there.
# Lighthouse audits the dashboard (internal/web, TestLighthouse) in the
# chromium-headless-shell above; 12.x because 13.x needs Node.js 22.19+
# (Debian 12 ships Node.js 18, CI images often 20), 12.8.2 runs on 18.16+.
npmpkgs=(c8@12.0.0 mocha@12.0.3 mochawesome@8.1.1 mochawesome-report-generator@6.3.2
  @playwright/test@1.65.1 allure@3.18.0 allure-playwright@3.12.2 lighthouse@12.8.2)
if [ "${1:-run}" != run ]; then
  npmdir="${REPORTD_NPM:-${XDG_CACHE_HOME:-$HOME/.cache}/reportd-npm}"
  stale=()
  for spec in "${npmpkgs[@]}"; do
    name="${spec%@*}" version="${spec##*@}"
    pj="$npmdir/node_modules/$name/package.json"
    [ -f "$pj" ] && [ "$(node -p 'require(process.argv[1]).version' "$pj")" = "$version" ] || stale+=("$spec")
  done
  if ((${#stale[@]})); then
    echo "installing into $npmdir: ${stale[*]}" >&2
    mkdir -p "$npmdir"
    PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --prefix "$npmdir" --no-audit --no-fund --save-exact "${npmpkgs[@]}" >&2
  fi
fi
