#!/usr/bin/env bash
# Installs the Debian packages reportd needs to build, run and test, skipping
# what is already there. Idempotent; needs root (or sudo) only when something
# is missing.
set -euo pipefail

# runtime: the PDF engines, their sandbox (bubblewrap) and fonts; test: poppler (pdftotext/pdfinfo),
# python3-coverage (real coverage.py output for internal/detect) and Debian's PostgreSQL
# (internal/pgtest starts a throwaway server on loopback for internal/pgstore);
# bench: nginx and wrk for side-by-side serving figures.
runtime=(chromium-headless-shell libreoffice-impress-nogui python3-uno bubblewrap
  fonts-noto-cjk fonts-dejavu-core fonts-liberation2 fonts-crosextra-carlito
  fonts-noto-color-emoji)
test=(poppler-utils python3-coverage postgresql)
bench=(nginx-light wrk)

want=("${runtime[@]}")
case "${1:-run}" in
  run) ;;
  test) want+=("${test[@]}") ;;
  bench) want+=("${test[@]}" "${bench[@]}") ;;
  *) echo "usage: $0 [run|test|bench]" >&2; exit 2 ;;
esac

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
