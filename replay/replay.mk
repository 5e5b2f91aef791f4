# replay/ — the recorder (preloaded, not sanitized) and the format code.
# -include'd by the top GNUmakefile.

REC_SRC     = replay/rec.c replay/rec_plan.c replay/rec_emit.c replay/rec_buf.c replay/rec_cache.c \
              replay/rec_sig.c replay/rec_proc.c replay/rec_heap.c replay/patch.c
REC_PIC_OBJ = $(REC_SRC:%.c=build/pic/%.o)
REPLAY_HDRS = replay/format.h replay/rec.h

REPLAY_TARGETS = build/libskelrec.so

# -fno-tree-loop-distribute-patterns: the recorder's own copy and fill
# loops must not become calls to libc's memcpy/memset, which may be
# patched (rec.h, "System calls that ... run no libc code").
build/pic/replay/%.o: replay/%.c $(REPLAY_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(WARN) -O2 -g -fPIC -fvisibility=hidden -fno-tree-loop-distribute-patterns -I. -c -o $@ $<

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
	$(CC) $(WARN) $(SANFLAGS) $(INC) -o $@ $< build/san/replay/patch.o build/san/replay/vtrace.o -lcmocka
