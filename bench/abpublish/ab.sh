#!/usr/bin/env bash
# Alternated A/B of `reportctl upload DIR` between two builds, upload by
# upload: single runs of bench/api swing as much as a change does on 2
# shared cores. Two daemons run side by side on the same disk, each holding
# SITE once; every upload waits until both are idle (their precompressed
# variants done) and is deleted after; `tar xzf` of the same files runs
# before and after each pair. Each round publishes SITE again (the store
# holds it: a CI re-run) and a copy with every file changed.
#
#   bench/abpublish/ab.sh A_REPORTD A_REPORTCTL B_REPORTD B_REPORTCTL SITE WORK [ROUNDS]
#
# WORK must be on the disk to measure (it holds both data directories).
# Prints one line per round and case: tar xzf, A, B (milliseconds).
set -euo pipefail
[ $# -ge 6 ] || { sed -n 2,14p "$0"; exit 2; }
A_D=$1 A_C=$2 B_D=$3 B_C=$4 SITE=$(realpath "$5") WORK=$6 ROUNDS=${7:-5}
mkdir -p "$WORK"; WORK=$(realpath "$WORK")
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true' EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
declare -A D=([a]=$A_D [b]=$B_D) C=([a]=$A_C [b]=$B_C) PORT PID
for s in a b; do
  PORT[$s]=$(free_port)
  rm -rf "$WORK/$s"; mkdir -p "$WORK/$s"
  env -i PATH="$PATH" HOME="$HOME" REPORTD_DASHBOARD=false REPORTD_CONVERT_WARM_ON_START=false REPORTD_CONTENT_ADDR=127.0.0.1:0 \
    "${D[$s]}" serve --config /dev/null --addr "127.0.0.1:${PORT[$s]}" --data-dir "$WORK/$s/data" > "$WORK/$s/log" 2>&1 &
  PID[$s]=$!; pids+=("$!")
done
for s in a b; do
  for _ in $(seq 1 100); do curl -sf "127.0.0.1:${PORT[$s]}/api/projects" >/dev/null && break; sleep 0.1; done
  curl -sf -XPOST -H 'Content-Type: application/json' -d '{"name":"ab"}' "127.0.0.1:${PORT[$s]}/api/projects" >/dev/null
  "${C[$s]}" upload "$SITE" --project 1 --server "http://127.0.0.1:${PORT[$s]}" --no-ci-metadata --json >/dev/null
done
cpu() { awk '{print $14+$15}' "/proc/$1/stat"; }
idle() { # both daemons' CPU time unchanged for a second (at most 5 minutes each)
  for s in a b; do prev=-1; for _ in $(seq 1 300); do t=$(cpu "${PID[$s]}"); [ "$t" = "$prev" ] && break; prev=$t; sleep 1; done; done
  sync
}
ms() { echo $(( ($2 - $1) / 1000000 )); }
up() { # side dir
  idle
  local s0 s1 out id
  s0=$(date +%s%N); out=$("${C[$1]}" upload "$2" --project 1 --server "http://127.0.0.1:${PORT[$1]}" --no-ci-metadata --json); s1=$(date +%s%N)
  id=$(grep -o '"id": [0-9]*' <<<"$out" | head -1 | grep -o '[0-9]*$')
  curl -sf -XDELETE "127.0.0.1:${PORT[$1]}/api/reports/$id" -o /dev/null
  ms "$s0" "$s1"
}
tarx() {
  idle; rm -rf "$WORK/untar"; mkdir "$WORK/untar"; sync
  local s0 s1; s0=$(date +%s%N); tar xzf "$1" -C "$WORK/untar"; s1=$(date +%s%N); ms "$s0" "$s1"
}
changed() { # copy of SITE with a line appended to every file but JSON
  rm -rf "$WORK/changed"; mkdir -p "$WORK/changed"; cp -r "$SITE" "$WORK/changed/"
  find "$WORK/changed" -type f ! -name '*.json' -exec sh -c 'for f; do printf "\n<!-- round %s -->\n" "$0" >> "$f"; done' "$1" {} +
}
name=$(basename "$SITE")
tar czf "$WORK/same.tgz" -C "$(dirname "$SITE")" "$name"
echo "round case tar_xzf_ms a_ms b_ms tar_xzf_after_ms"
for r in $(seq 1 "$ROUNDS"); do
  echo "$r same $(tarx "$WORK/same.tgz") $(up a "$SITE") $(up b "$SITE") $(tarx "$WORK/same.tgz")"
  changed "$r"; tar czf "$WORK/changed.tgz" -C "$WORK/changed" "$name"
  echo "$r changed $(tarx "$WORK/changed.tgz") $(up a "$WORK/changed/$name") $(up b "$WORK/changed/$name") $(tarx "$WORK/changed.tgz")"
done
