#!/usr/bin/env bash
# Installs the reportd .deb the way an operator does, on this machine, and
# takes it out again (issue 23; .ci/run runs it after the tests):
#   apt-get install ./dist/reportd_<v>_<arch>.deb  → reportd user, /var/lib/reportd, unit enabled not started
#   the installed reportd as the reportd user, with /etc/reportd/reportd.yaml → a report published
#   apt-get purge reportd                          → config, unit and user gone; the data kept (not empty)
# Needs root. Refuses to run where reportd is installed or /var/lib/reportd
# exists, so a real installation is never touched.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" -eq 0 ] || { echo "deb-check: needs root (it installs and purges a package)" >&2; exit 2; }
if dpkg-query -W -f='${Status}' reportd 2>/dev/null | grep -q 'ok installed' || [ -e /var/lib/reportd ] || getent passwd reportd >/dev/null; then
  echo "deb-check: reportd is installed here (or /var/lib/reportd or the user exists): leaving this machine alone" >&2
  exit 2
fi
fail() { echo "deb-check: FAIL: $*" >&2; exit 1; }

arch=$(dpkg --print-architecture)
DIST_DIR=dist DIST_ONLY="deb-$arch" bash scripts/dist.sh
deb="dist/reportd_$(bash scripts/version.sh)_$arch.deb"
[ -f "$deb" ] || fail "$deb was not built"

pid=""
cleanup() {
  [ -z "$pid" ] || kill "$pid" 2>/dev/null || true
  if dpkg-query -W -f='${Status}' reportd 2>/dev/null | grep -qv 'not-installed'; then
    DEBIAN_FRONTEND=noninteractive apt-get purge -y reportd >/dev/null 2>&1 || true
  fi
  rm -rf /var/lib/reportd
}
trap cleanup EXIT

log=$(mktemp)
DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "./$deb" 2>&1 | tee "$log"
grep -q "enabled, but NOT started" "$log" || fail "the install did not say the unit is enabled but not started"
getent passwd reportd >/dev/null || fail "no reportd user"
[ "$(stat -c %U /var/lib/reportd)" = reportd ] || fail "/var/lib/reportd is not owned by reportd"
[ "$(stat -c '%G %a' /etc/reportd/reportd.yaml)" = "reportd 640" ] || fail "/etc/reportd/reportd.yaml is not root:reportd 0640"
[ -L /etc/systemd/system/multi-user.target.wants/reportd.service ] || fail "the unit is not enabled"
/usr/bin/reportd --version
/usr/bin/reportctl --version

# PID 1 here need not be systemd: start the installed binary as the packaged
# user with the unit's environment (HOME, data directory).
runuser -u reportd -- env HOME=/tmp REPORTD_DATA_DIR=/var/lib/reportd REPORTD_ADDR=127.0.0.1:0 \
  REPORTD_CONTENT_ADDR=127.0.0.1:0 REPORTD_CONVERT_WARM_ON_START=false \
  /usr/bin/reportd serve --config /etc/reportd/reportd.yaml &
pid=$!
url=""
for _ in $(seq 1 120); do
  url=$(sed -n 's/.*"url": *"\([^"]*\)".*/\1/p' /var/lib/reportd/reportd.serve.json 2>/dev/null || true)
  [ -n "$url" ] && curl -fsS "$url/api/reports/ping" >/dev/null 2>&1 && break
  sleep 0.5
done
[ -n "$url" ] || fail "the installed reportd did not come up"
printf '# Installed from the .deb\n' >/tmp/deb-check.md
/usr/bin/reportctl --server "$url" upload /tmp/deb-check.md --project-name deb-check --create-project
curl -fsS "$url/dl/checksums.txt" | grep -q "reportctl-linux-$arch" || fail "/dl/checksums.txt does not list reportctl-linux-$arch"
[ -n "$(find /var/lib/reportd -user reportd -name '*.md' -print -quit)" ] || fail "no report file owned by reportd in /var/lib/reportd"
kill "$pid"
wait "$pid" || true
pid=""

DEBIAN_FRONTEND=noninteractive apt-get purge -y reportd 2>&1 | tee "$log"
grep -q "kept /var/lib/reportd" "$log" || fail "purge did not say it kept /var/lib/reportd"
getent passwd reportd >/dev/null && fail "purge left the reportd user"
[ -e /etc/reportd ] && fail "purge left /etc/reportd"
[ -e /lib/systemd/system/reportd.service ] && fail "purge left the unit"
[ -e /etc/systemd/system/multi-user.target.wants/reportd.service ] && fail "purge left the unit enabled"
[ -d /var/lib/reportd ] || fail "purge removed /var/lib/reportd, which held reports"
echo "deb-check: ok (installed, served as user reportd, published, purged; data kept)"
