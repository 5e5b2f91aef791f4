# make bench — native vs recorded vs full tracing vs online vs lackey,
# replay throughput, value-trace sizes.  bench/run.sh does the work;
# docs/bench.md explains the columns.  Writes bench/results/latest.csv.
.PHONY: bench
build/bench/timer: bench/timer.c
	@mkdir -p build/bench
	$(CC) -std=c11 -O2 -Wall -Wextra -o $@ $<

bench: all samples build/bench/timer
	@sh bench/run.sh
