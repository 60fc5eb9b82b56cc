#!/usr/bin/env bash
# What a publish leaves to the background (the journal, docs/sites.md): one
# daemon holding SITE once, then ROUNDS uploads of a copy of SITE with every
# file changed. Per upload it prints the wall time, how long after the reply
# uploads/.journal/ held no pack any more, and reportd's CPU (ms) during the
# upload and until idle (precompressed variants included).
#
#   bench/abpublish/journal.sh REPORTD REPORTCTL SITE WORK [ROUNDS]
set -euo pipefail
[ $# -ge 4 ] || { sed -n 2,8p "$0"; exit 2; }
D=$1 C=$2 SITE=$(realpath "$3") WORK=$4 N=${5:-3}
rm -rf "$WORK"; mkdir -p "$WORK"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
env -i PATH="$PATH" HOME="$HOME" REPORTD_DASHBOARD=false REPORTD_CONVERT_WARM_ON_START=false REPORTD_CONTENT_ADDR=127.0.0.1:0 \
  "$D" serve --config /dev/null --addr "127.0.0.1:$PORT" --data-dir "$WORK/data" > "$WORK/log" 2>&1 &
PID=$!; trap 'kill $PID' EXIT
for _ in $(seq 1 100); do curl -sf "127.0.0.1:$PORT/api/projects" >/dev/null && break; sleep 0.1; done
curl -sf -XPOST -H 'Content-Type: application/json' -d '{"name":"ab"}' "127.0.0.1:$PORT/api/projects" >/dev/null
"$C" upload "$SITE" --project 1 --server "http://127.0.0.1:$PORT" --no-ci-metadata --json >/dev/null
cpu() { awk '{print ($14+$15)*10}' "/proc/$1/stat"; }
idle() { prev=-1; for _ in $(seq 1 300); do t=$(cpu $PID); [ "$t" = "$prev" ] && break; prev=$t; sleep 1; done; sync; }
for r in $(seq 1 $N); do
  rm -rf "$WORK/changed"; mkdir -p "$WORK/changed"; cp -r "$SITE" "$WORK/changed/"
  find "$WORK/changed" -type f ! -name '*.json' -exec sh -c 'for f; do printf "\n<!-- round %s -->\n" "$0" >> "$f"; done' $r {} +
  idle
  c0=$(cpu $PID); s0=$(date +%s%N)
  "$C" upload "$WORK/changed/$(basename "$SITE")" --project 1 --server "http://127.0.0.1:$PORT" --no-ci-metadata --json > /dev/null
  s1=$(date +%s%N); c1=$(cpu $PID)
  while ls "$WORK/data/uploads/.journal/" 2>/dev/null | grep -q '\.pack$'; do sleep 0.01; done
  s2=$(date +%s%N)
  idle; c2=$(cpu $PID)
  echo "round $r wall $(( (s1-s0)/1000000 )) journal_empty_after $(( (s2-s1)/1000000 )) cpu_upload $((c1-c0)) cpu_until_idle $((c2-c0))"
done
