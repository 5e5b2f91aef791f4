# tests/fuzz/ — coverage-guided fuzzing with libFuzzer (clang), apart from
# `make check`, which never needs clang.  -include'd by the top GNUmakefile.
#   make fuzz [SECONDS=600] [FUZZ=elf vtrace patch]
# runs each harness in turn for SECONDS; corpora grow in build/fuzz/corpus/,
# crashes land in build/fuzz/artifacts/ (tests/fuzz/README.md).

FUZZ_CC     ?= clang-14
SECONDS     ?= 600
FUZZ        ?= elf vtrace patch
FUZZ_SAN     = -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_CFLAGS  = -O1 -g -fno-omit-frame-pointer $(FUZZ_SAN) -fsanitize=fuzzer-no-link
FUZZ_WARN    = $(filter-out -Wno-format-truncation,$(WARN))
FUZZ_LIB_OBJ = $(LIB_SRC:%.c=build/fuzz/obj/%.o)
FUZZ_BINS    = $(FUZZ:%=build/fuzz/fuzz_%)

build/fuzz/obj/%.o: %.c $(HDRS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_WARN) $(FUZZ_CFLAGS) $(INC) -c -o $@ $<

# each harness links only the code it exercises, so that libFuzzer's
# coverage figures are about that code
FUZZ_FMT_OBJ = build/fuzz/obj/replay/patch.o build/fuzz/obj/replay/vtrace.o
.SECONDARY: $(FUZZ_LIB_OBJ)

build/fuzz/fuzz_elf: tests/fuzz/fuzz_elf.c $(FUZZ_LIB_OBJ)
	$(FUZZ_CC) $(FUZZ_WARN) $(FUZZ_CFLAGS) $(INC) -fsanitize=fuzzer -o $@ $< \
		$(FUZZ_LIB_OBJ) $(LIBS)

build/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_FMT_OBJ) $(REPLAY_HDRS)
	$(FUZZ_CC) $(FUZZ_WARN) $(FUZZ_CFLAGS) $(INC) -fsanitize=fuzzer -o $@ $< $(FUZZ_FMT_OBJ) -lzstd

fuzz-build: $(FUZZ_BINS)

fuzz:
	@sh tests/fuzz/deps.sh
	@$(MAKE) --no-print-directory all samples
	@$(MAKE) --no-print-directory fuzz-build
	@sh tests/fuzz/seeds.sh
	@sh tests/fuzz/run.sh $(SECONDS) $(FUZZ)
