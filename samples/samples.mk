# Each samples/NAME.c is built at -O0/-O2/-O3, as PIE and non-PIE, plus a
# stripped copy of each: build/samples/NAME-O2-pie, NAME-O2-nopie-stripped...
SAMPLE_SRC  = $(wildcard samples/*.c)
SAMPLE_NAMES= $(SAMPLE_SRC:samples/%.c=%)
SAMPLE_OPTS = O0 O2 O3
SAMPLE_PIES = pie nopie
SAMPLE_BINS = $(foreach n,$(SAMPLE_NAMES),$(foreach o,$(SAMPLE_OPTS),$(foreach p,$(SAMPLE_PIES),\
	build/samples/$(n)-$(o)-$(p) build/samples/$(n)-$(o)-$(p)-stripped)))
SAMPLE_CFLAGS = -g -Wall
SAMPLE_LIBS_libmloop = -lm

samples: $(SAMPLE_BINS)

pieflag = $(if $(filter nopie,$(1)),-fno-pie -no-pie,-fpie -pie)

define sample_rule
build/samples/$(1)-$(2)-$(3): samples/$(1).c
	@mkdir -p build/samples
	$$(CC) -$(2) $$(SAMPLE_CFLAGS) $$(call pieflag,$(3)) -o $$@ $$< -lpthread $$(SAMPLE_LIBS_$(1))
build/samples/$(1)-$(2)-$(3)-stripped: build/samples/$(1)-$(2)-$(3)
	strip -o $$@ $$<
endef
$(foreach n,$(SAMPLE_NAMES),$(foreach o,$(SAMPLE_OPTS),$(foreach p,$(SAMPLE_PIES),\
	$(eval $(call sample_rule,$(n),$(o),$(p))))))
