# make bench — native vs recorded vs full tracing vs online vs lackey,
# replay throughput, value-trace sizes.  bench/run.sh does the work;
# docs/bench.md explains the columns.  Writes bench/results/latest.csv.
.PHONY: bench
build/bench/timer: bench/timer.c
	@mkdir -p build/bench
	$(CC) -std=c11 -O2 -Wall -Wextra -o $@ $<

bench: all samples build/bench/timer
	@sh bench/run.sh
	@sh bench/whole.sh
	@sh bench/real.sh

# The whole-process columns alone (bench/whole.sh): libc's module cold and
# cached, recorded/native and value bytes per access, main-only vs whole.
.PHONY: bench-whole
bench-whole: all samples build/bench/timer
	@sh bench/whole.sh

# The approximate mode's ω × C sweep on the irregular samples (bench/bid.sh,
# docs/bid.md): recorded/native, values per access, MA and AIA.  Apart from
# `make bench` because it takes about an hour on the 2-core machine.
.PHONY: bench-bid
bench-bid: all samples build/bench/timer
	@sh bench/bid.sh

# Real programs (bench/real.sh): Debian commands on a 39 MB input, whole
# process, native vs recorded, value bytes per access, replay throughput.
.PHONY: bench-real
bench-real: all build/bench/timer
	@sh bench/real.sh
