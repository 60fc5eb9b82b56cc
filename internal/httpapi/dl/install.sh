#!/bin/sh
# Installs reportctl from the reportd server that served this script, at the
# server's own version: detects OS and architecture, downloads the binary
# from $server/dl/reportctl/<os>-<arch>, checks it against the server's
# checksums.txt (SHA-256) and installs it.
#
#   curl -fsSL $server/dl/install.sh | sh
#   curl -fsSL -H "Authorization: Bearer $T" $server/dl/install.sh | sh -s -- --token "$T"
#
# Options: --dir DIR (default ~/.local/bin, /usr/local/bin as root),
# --token TOKEN (or REPORTCTL_TOKEN; for servers that require it for reads),
# --server URL (default: the server this script came from).
set -eu

server=@SERVER@
dir=""
token="${REPORTCTL_TOKEN:-}"

die() { echo "install.sh: $*" >&2; exit 1; }

while [ $# -gt 0 ]; do
  case "$1" in
    --dir) [ $# -ge 2 ] || die "--dir needs a value"; dir="$2"; shift 2 ;;
    --dir=*) dir="${1#--dir=}"; shift ;;
    --token) [ $# -ge 2 ] || die "--token needs a value"; token="$2"; shift 2 ;;
    --token=*) token="${1#--token=}"; shift ;;
    --server) [ $# -ge 2 ] || die "--server needs a value"; server="$2"; shift 2 ;;
    --server=*) server="${1#--server=}"; shift ;;
    -h|--help) echo "usage: curl -fsSL $server/dl/install.sh | sh -s -- [--dir DIR] [--token TOKEN] [--server URL]"; exit 0 ;;
    *) echo "install.sh: unknown option $1 (try --dir, --token, --server)" >&2; exit 2 ;;
  esac
done
server="${server%/}"

if [ -z "$dir" ]; then
  if [ "$(id -u)" = 0 ]; then dir=/usr/local/bin; else dir="$HOME/.local/bin"; fi
fi

case "$(uname -s)" in
  Linux) os=linux ;;
  Darwin) os=darwin ;;
  MINGW*|MSYS*|CYGWIN*|Windows_NT) os=windows ;;
  *) die "no reportctl build for $(uname -s); build it from source (go build ./cmd/reportctl)" ;;
esac
case "$(uname -m)" in
  x86_64|amd64) arch=amd64 ;;
  aarch64|arm64) arch=arm64 ;;
  *) die "no reportctl build for $(uname -m); build it from source (go build ./cmd/reportctl)" ;;
esac
exe=""
target="$os-$arch"
if [ "$os" = windows ]; then
  [ "$arch" = amd64 ] || die "reportctl for windows is built for amd64 only"
  exe=.exe
  target="$target.exe"
fi

fetch() { # URL FILE
  if command -v curl >/dev/null 2>&1; then
    if [ -n "$token" ]; then
      curl -fsSL --retry 3 -H "Authorization: Bearer $token" -o "$2" "$1"
    else
      curl -fsSL --retry 3 -o "$2" "$1"
    fi
  elif command -v wget >/dev/null 2>&1; then
    if [ -n "$token" ]; then
      wget -q --header "Authorization: Bearer $token" -O "$2" "$1"
    else
      wget -q -O "$2" "$1"
    fi
  else
    die "curl or wget is needed"
  fi
}

sha256() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | cut -d' ' -f1
  elif command -v shasum >/dev/null 2>&1; then
    shasum -a 256 "$1" | cut -d' ' -f1
  elif command -v openssl >/dev/null 2>&1; then
    openssl dgst -sha256 -r "$1" | cut -d' ' -f1
  else
    die "sha256sum, shasum or openssl is needed to verify the download"
  fi
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

fetch "$server/dl/checksums.txt" "$tmp/checksums.txt" || die "could not download $server/dl/checksums.txt"
fetch "$server/dl/reportctl/$target" "$tmp/reportctl$exe" || die "could not download $server/dl/reportctl/$target"
want=$(awk -v f="reportctl-$target" '$2 == f || $2 == "*" f { print $1; exit }' "$tmp/checksums.txt")
[ -n "$want" ] || die "$server/dl/checksums.txt lists no reportctl-$target"
got=$(sha256 "$tmp/reportctl$exe")
[ "$got" = "$want" ] || die "checksum mismatch for reportctl-$target: got $got, want $want"

mkdir -p "$dir"
chmod 755 "$tmp/reportctl$exe"
# Copy next to the target, then rename: a running reportctl is never half-written.
cp "$tmp/reportctl$exe" "$dir/.reportctl$exe.new"
mv -f "$dir/.reportctl$exe.new" "$dir/reportctl$exe"
echo "installed $dir/reportctl$exe ($("$dir/reportctl$exe" --version))"
case ":${PATH}:" in
  *":$dir:"*) ;;
  *) echo "note: $dir is not on PATH; add it, or call $dir/reportctl$exe" >&2 ;;
esac
