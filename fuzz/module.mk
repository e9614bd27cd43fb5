# fuzz/: libFuzzer harnesses for every parser of outside input (fuzz/README.md).
#
#   make fuzz        build them into build/fuzz/ (clang, ASan + UBSan)
#   make fuzz-long   run each for FUZZ_SECONDS (default 600) on its corpus
#   make test        replays each committed corpus and runs each a few seconds
#                    (tests/fuzz/test_fuzz.sh)
#
# The sources under test are compiled again with clang's coverage
# instrumentation into build/fuzz/obj/ (the gcc build is not touched).

FUZZ_CC      ?= clang
FUZZ_DIR     := $(B)/fuzz
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_CFLAGS  := -std=gnu11 -O1 -g -pthread -Iinclude -Ifuzz -I$(CUDA_HOME)/include -Iemulator/core \
	-I$(EMU_GEN) -Isim -Ispank_plugin -DMAYA_VERSION='"$(VERSION)"' -DFUZZ_HWSPECS='"$(abspath hwspecs)"' \
	-fsanitize=fuzzer-no-link $(FUZZ_SAN) -MMD -MP
FUZZ_LDFLAGS := -fsanitize=fuzzer $(FUZZ_SAN) -pthread
FUZZ_SECONDS ?= 600

$(FUZZ_DIR)/obj/%.o: %.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -c -o $@ $<

fuzz_objs = $(patsubst %.c,$(FUZZ_DIR)/obj/%.o,$(1))

FUZZ_COMMON   := $(call fuzz_objs,fuzz/fuzz_util.c $(filter-out common/run_watchdog.c,$(COMMON_SRCS)))
FUZZ_COLLATOR := $(call fuzz_objs,$(COLLATOR_SRCS))
FUZZ_SIM      := $(call fuzz_objs,$(SIM_SRCS))
FUZZ_EST      := $(call fuzz_objs,$(EST_SRCS))
# fatbin.c reads the images, kernel_layout.c and module_symbols.c what they
# hold; kernels' work goes through kernel_work.c (kernel_loops.c,
# kernel_value.c, kernel_expr.c, kernel_shared.c) and the SASS cache
# (sass_work.c), which the harness switches off but must link
FUZZ_DECODERS := $(call fuzz_objs,emulator/core/fatbin.c emulator/core/kernel_layout.c \
	emulator/core/module_symbols.c emulator/core/ptx_ops.c emulator/core/ptx_parse.c \
	emulator/core/kernel_work.c emulator/core/kernel_loops.c emulator/core/kernel_value.c emulator/core/kernel_expr.c emulator/core/kernel_shared.c \
	emulator/core/sass_work.c emulator/core/sass_parse.c)
FUZZ_SPANK    := $(call fuzz_objs,spank_plugin/spank_option.c)
FUZZ_LIBS     := -lconfuse -ldl -lzstd -lz -lm

# harness -> the objects it links beyond its own and FUZZ_COMMON
FUZZ_USES_rank_trace   := $(FUZZ_COLLATOR)
FUZZ_USES_trace_tail   := $(FUZZ_COLLATOR)
FUZZ_USES_job_trace    := $(FUZZ_SIM) $(FUZZ_EST) $(FUZZ_COLLATOR)
FUZZ_USES_collate      := $(FUZZ_SIM) $(FUZZ_COLLATOR)
FUZZ_USES_hwspec       :=
FUZZ_USES_maya_conf    :=
FUZZ_USES_run_conf     :=
FUZZ_USES_oracle       := $(FUZZ_EST) $(FUZZ_COLLATOR)
FUZZ_USES_emulate_opt  := $(FUZZ_SPANK)
FUZZ_USES_fatbin       := $(FUZZ_DECODERS)
FUZZ_EXTRA_job_trace   := -lxgboost
FUZZ_EXTRA_oracle      := -lxgboost
FUZZ_EXTRA_fatbin      := -llz4 -lzstd -lstdc++

FUZZ_NAMES   := rank_trace trace_tail job_trace collate hwspec maya_conf run_conf oracle emulate_opt fatbin
FUZZ_TARGETS := $(FUZZ_NAMES:%=$(FUZZ_DIR)/fuzz_%)

# the objects are made by a pattern rule and named only through the
# harnesses' prerequisites, so make would take them as intermediate and
# delete them after each build, compiling them all again the next time
.PRECIOUS: $(FUZZ_DIR)/obj/%.o

.SECONDEXPANSION:
$(FUZZ_DIR)/fuzz_%: $(FUZZ_DIR)/obj/fuzz/fuzz_%.o $$(FUZZ_USES_$$*) $(FUZZ_COMMON)
	@mkdir -p $(@D)
	$(FUZZ_CC) -o $@ $^ $(FUZZ_LDFLAGS) $(FUZZ_LIBS) $(FUZZ_EXTRA_$*)


.PHONY: fuzz fuzz-long
fuzz: $(FUZZ_TARGETS)

fuzz-long: fuzz
	fuzz/run --seconds $(FUZZ_SECONDS) $(FUZZ_NAMES)

-include $(shell find $(FUZZ_DIR)/obj -name '*.d' 2>/dev/null)
