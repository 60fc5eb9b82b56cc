# Conveniences; the scripts are the source of truth (README).
.PHONY: run build dist test bench bench-scaleout bench-convert completions man
run:
	bash scripts/run.sh
build:
	bash scripts/build.sh
dist:
	bash scripts/dist.sh
test:
	bash scripts/test.sh
bench:
	bash bench/run.sh
bench-scaleout:
	go build -o /tmp/reportd-bench ./cmd/reportd && go run ./bench/scaleout -reportd /tmp/reportd-bench
bench-convert:
	go run ./bench/convert
completions man:
	go run ./scripts/gencompletions
