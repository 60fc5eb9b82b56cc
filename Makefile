# Conveniences; the scripts are the source of truth (README).
.PHONY: run build test bench bench-convert completions
run:
	bash scripts/run.sh
build:
	bash scripts/build.sh
test:
	bash scripts/test.sh
bench:
	bash bench/run.sh
bench-convert:
	go run ./bench/convert
completions:
	go run ./scripts/gencompletions
