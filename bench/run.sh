#!/usr/bin/env bash
# bench/run.sh — the whole benchmark suite, on loopback, in one command.
#
#   bash bench/run.sh          full run (~6-10 min on 2 cores); writes BENCHMARKS.md
#   bash bench/run.sh --quick  small sizes, ~1 min; smoke-tests the suite, writes nothing
#
# It builds reportd, runs bench/api (API scale, start-up, upload vs cp,
# small uploads, serving vs nginx), bench/scaleout (bbolt next to
# PostgreSQL, 1 and 2 postgres+s3 replicas, a 1 GiB upload through S3;
# about 70 s), bench/slowreaders (1,100 slow readers and 200 trickles
# against each listener; about 2 min) and, when present, bench/convert (PDF engines), prints the tables and (full run) writes BENCHMARKS.md with the
# figures, the machine and the command. Everything below the hand-written
# marker of the existing BENCHMARKS.md (before/after figures of the
# performance work, dated sections) is kept as it is.
set -euo pipefail

cd "$(dirname "$0")/.."
root=$PWD

quick=""
case "${1:-}" in
--quick) quick=1 ;;
"") ;;
*) echo "usage: bash bench/run.sh [--quick]" >&2; exit 2 ;;
esac

for tool in /usr/sbin/nginx /usr/bin/wrk go cp sync tar python3-coverage; do
	command -v "$tool" >/dev/null || { echo "bench: $tool is missing (scripts/install-deps.sh installs nginx-light, wrk and python3-coverage)" >&2; exit 1; }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/reportd-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

# The 1 GiB upload needs the source, a cp copy and the stored upload at once.
need_kib=$((4 * 1024 * 1024))
[ -n "$quick" ] && need_kib=$((512 * 1024))
avail_kib=$(df -Pk "$work" | awk 'NR==2 {print $4}')
if [ "$avail_kib" -lt "$need_kib" ]; then
	echo "bench: need $((need_kib / 1024)) MiB free in $work, have $((avail_kib / 1024)) MiB" >&2
	exit 1
fi

started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
t0=$(date +%s)

echo "bench: building reportd, reportctl and bench/api" >&2
go build -o "$work/reportd" ./cmd/reportd
go build -o "$work/reportctl" ./cmd/reportctl
go build -o "$work/api" ./bench/api

"$work/api" -reportd "$work/reportd" -reportctl "$work/reportctl" -work "$work/api-work" -md "$work/api.md" ${quick:+-quick}

echo "bench: running bench/scaleout (PostgreSQL and versitygw on loopback)" >&2
go build -o "$work/scaleout" ./bench/scaleout
"$work/scaleout" -reportd "$work/reportd" -work "$work/scaleout-work" -md "$work/scaleout.md" ${quick:+-quick}

echo "bench: running bench/slowreaders (1,100 slow readers and 200 trickles per listener)" >&2
go build -o "$work/slowreaders" ./bench/slowreaders
"$work/slowreaders" -reportd "$work/reportd" -label "this tree" -work "$work/slowreaders-work" -md "$work/slowreaders.md" ${quick:+-quick}
echo "bench: running bench/history (history query, 100,000 reports, bbolt and PostgreSQL)" >&2
go run ./bench/history ${quick:+-reports 10000 -runs 20} >"$work/history.md"
cat "$work/history.md"

smallci_md="bench/smallci was skipped: no \`mc\` on PATH (\`go install github.com/minio/mc@latest\`)."
if command -v mc >/dev/null; then
	echo "bench: running bench/smallci (reportctl next to mc cp into versitygw)" >&2
	go build -o "$work/reportctl" ./cmd/reportctl
	go run ./bench/smallci -reportd "$work/reportd" -reportctl "$work/reportctl" -mc "$(command -v mc)" -md "$work/smallci.md" ${quick:+-rounds 1 -lone 5}
	smallci_md=$(cat "$work/smallci.md")
fi

convert_md=""
if [ -d bench/convert ] && ls bench/convert/*.go >/dev/null 2>&1; then
	echo "bench: running bench/convert" >&2
	args=()
	if [ -n "$quick" ]; then
		# Shrink bench/convert with whichever knobs it has.
		help=$(go run ./bench/convert -h 2>&1 || true)
		if grep -q -- '-quick' <<<"$help"; then
			args+=(-quick)
		elif grep -q -- '-cold' <<<"$help"; then
			args+=(-n 3 -cold 1)
		fi
	fi
	if go run ./bench/convert "${args[@]}" >"$work/convert.out" 2>"$work/convert.err"; then
		cat "$work/convert.out"
		convert_md=$(printf '`go run ./bench/convert`:\n\n```\n%s\n```\n' "$(cat "$work/convert.out")")
	else
		echo "bench: bench/convert failed:" >&2
		cat "$work/convert.err" >&2
		convert_md="bench/convert failed in this run: $(tail -n 5 "$work/convert.err")"
	fi
	# Hostile clients (issue 21): a one-page PDF while three hostile site
	# walks run, and Markdown of "[a](" repeated.
	hostile_n=20 links_n=3
	[ -n "$quick" ] && hostile_n=3 links_n=1
	for run in "-hostile 3 -n $hostile_n" "-open-links 400 -n $links_n"; do
		echo "bench: running bench/convert $run" >&2
		# shellcheck disable=SC2086 # $run is a list of flags
		if go run ./bench/convert $run >"$work/convert-extra.out" 2>"$work/convert.err"; then
			cat "$work/convert-extra.out"
			convert_md+=$(printf '\n\n`go run ./bench/convert %s`:\n\n```\n%s\n```\n' "$run" "$(cat "$work/convert-extra.out")")
		else
			echo "bench: bench/convert $run failed:" >&2
			cat "$work/convert.err" >&2
			convert_md+=$(printf '\n\nbench/convert %s failed in this run: %s\n' "$run" "$(tail -n 5 "$work/convert.err")")
		fi
	done
else
	convert_md="bench/convert is not in this tree yet; run.sh runs \`go run ./bench/convert\` as soon as it exists."
fi

load_after=$(cut -d' ' -f1-3 /proc/loadavg)
took=$(($(date +%s) - t0))
echo "bench: whole suite took ${took}s (load average before: $load_before, after: $load_after)" >&2

if [ -n "$quick" ]; then
	echo "bench: quick mode, BENCHMARKS.md left as it is" >&2
	exit 0
fi

cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
mem=$(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo)
fs=$(df -PT "$work" | awk 'NR==2 {print $2}')
marker='<!-- Hand-written below this line: `bash bench/run.sh` regenerates what is above it and keeps the rest. -->'
# Without its marker line the hand-written part could not be told apart and
# would be lost: refuse rather than overwrite it.
if [ -f "$root/BENCHMARKS.md" ] && ! tr -d '\r' <"$root/BENCHMARKS.md" | grep -qxF "$marker"; then
	echo "bench: BENCHMARKS.md lacks its hand-written marker line; restore it (see bench/run.sh) before regenerating" >&2
	exit 1
fi
{
	echo "# Benchmarks"
	echo
	echo "Generated by \`bash bench/run.sh\` (\`make bench\`) on $started; the whole suite took ${took}s."
	echo "Every server runs on 127.0.0.1 on this machine, next to its load generator."
	echo
	echo "| Machine | |"
	echo "|---|---|"
	echo "| CPU | $cpu, $(nproc) cores |"
	echo "| Memory | $mem |"
	echo "| Disk | $fs on $(df -P "$work" | awk 'NR==2 {print $1}') |"
	echo "| Kernel | $(uname -r) |"
	echo "| Go | $(go version | cut -d' ' -f3-) |"
	echo "| nginx | $(/usr/sbin/nginx -v 2>&1 | cut -d/ -f2) |"
	echo "| wrk | $(/usr/bin/wrk -v 2>&1 | head -n1 | cut -d' ' -f2) |"
	echo "| Load average | $load_before before, $load_after after |"
	echo
	echo "The machine is shared: other work may run during a run, so read small differences as noise."
	echo
	echo "## API, upload, serving, start-up (bench/api)"
	echo
	cat "$work/api.md"
	echo
	echo "## PostgreSQL and S3 next to bbolt (bench/scaleout)"
	echo
	cat "$work/scaleout.md"
	echo
	echo "## Slow readers and trickles (bench/slowreaders)"
	echo
	cat "$work/slowreaders.md"
	echo
	echo "## History query (bench/history)"
	echo
	echo "\`go run ./bench/history\`: the newest points of one report name (GET /api/projects/{id}/history's store query)."
	echo
	cat "$work/history.md"
	echo
	echo "## Small CI uploads next to mc (bench/smallci)"
	echo
	echo "$smallci_md"
	echo
	echo "## PDF conversion (bench/convert)"
	echo
	echo "$convert_md"
	echo
	echo "$marker"
	echo
	# The hand-written part of the file being replaced, kept whole.
	if [ -f "$root/BENCHMARKS.md" ]; then
		awk -v m="$marker" 'kept && (NR > start + 1 || $0 != "") {print} $0 == m {kept = 1; start = NR}' "$root/BENCHMARKS.md"
	fi
} >"$work/BENCHMARKS.md"
mv "$work/BENCHMARKS.md" "$root/BENCHMARKS.md"
echo "bench: wrote BENCHMARKS.md" >&2
