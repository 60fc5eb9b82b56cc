#!/usr/bin/env bash
# Installs what is missing, builds reportd and reportctl into ./bin, and
# starts reportd with the embedded defaults: bbolt + ./data on 127.0.0.1:8080.
# Extra arguments go to `reportd serve` (e.g. --addr 0.0.0.0:8080).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh run
bash scripts/build.sh
exec ./bin/reportd serve "$@"
