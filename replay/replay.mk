# replay/ — the recorder (preloaded, not sanitized) and the format code.
# -include'd by the top GNUmakefile.

REC_SRC     = replay/rec.c replay/rec_plan.c replay/rec_emit.c replay/rec_buf.c replay/rec_cache.c \
              replay/rec_sig.c replay/rec_proc.c replay/rec_heap.c replay/rec_exit.c replay/patch.c
REC_PIC_OBJ = $(REC_SRC:%.c=build/pic/%.o) build/pic/rec_zstd_all.o
REPLAY_HDRS = replay/format.h replay/rec.h

REPLAY_TARGETS = build/libskelrec.so

# -fno-tree-loop-distribute-patterns: the recorder's own copy and fill
# loops must not become calls to libc's memcpy/memset, which may be
# patched (rec.h, "System calls that ... run no libc code").
build/pic/replay/%.o: replay/%.c $(REPLAY_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(WARN) -O2 -g -fPIC -fvisibility=hidden -fno-tree-loop-distribute-patterns -I. -c -o $@ $<

# The recorder's compressor (rec_zstd.c) with Debian's static libzstd.a
# in one object: zstd's calls to libc go to the recorder's own rec_z_*
# (its flush runs no libc code), and every symbol but those rec_z_* is
# made local, so that a program's own libzstd and ours never meet.  The
# check after it fails the build if a libc call slipped through.
ZSTD_A      ?= $(firstword $(wildcard /usr/lib/x86_64-linux-gnu/libzstd.a /usr/lib64/libzstd.a /usr/lib/libzstd.a))
REC_Z_LIBC   = memcpy memmove memset memcmp malloc calloc free \
               qsort clock __fprintf_chk fflush fputc fwrite stderr \
               ZSTD_trace_compress_begin ZSTD_trace_compress_end \
               ZSTD_trace_decompress_begin ZSTD_trace_decompress_end
build/pic/rec_zstd_all.o: build/pic/replay/rec_zstd.o $(ZSTD_A)
	@test -n "$(ZSTD_A)" || { echo "skel: libzstd.a not found (package libzstd-dev; make deps)" >&2; exit 1; }
	objcopy $(foreach s,$(REC_Z_LIBC),--redefine-sym $(s)=rec_z_$(s)) $(ZSTD_A) $@.a
	ld -r -o $@.r $< --whole-archive $@.a
	objcopy -w --keep-global-symbol='rec_z_*' $@.r $@
	@rm -f $@.a $@.r
	@if nm -u $@ | grep -v -w -e __stack_chk_fail -e _GLOBAL_OFFSET_TABLE_; then \
		echo "skel: $@ calls the functions above outside the recorder" >&2; rm -f $@; exit 1; fi

# The preload library: no sanitizers (it runs inside arbitrary programs,
# before their main), only the symbols it interposes are exported.
build/libskelrec.so: $(REC_PIC_OBJ)
	@mkdir -p $(dir $@)
	$(CC) -shared -o $@ $^ -lZydis -lpthread -ldl

build/san/replay/%.o: replay/%.c $(REPLAY_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(WARN) $(SANFLAGS) $(INC) -c -o $@ $<

build/san/tests/test_recorder: build/libskelrec.so build/san/replay/patch.o build/san/replay/vtrace.o
build/san/tests/test_recorder: tests/test_recorder.c tests/testutil.h $(REPLAY_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(WARN) $(SANFLAGS) $(INC) -o $@ $< build/san/replay/patch.o build/san/replay/vtrace.o -lcmocka -lzstd
