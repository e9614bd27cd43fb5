# maya: GNU Makefile.
#
#   make                 build everything into build/ (laid out like an install prefix)
#   make test            build, then run the test suite (tests/run)
#   make test-frameworks-long  the frameworks' larger variants (tests/frameworks/long)
#   make fuzz            build the libFuzzer harnesses (fuzz/, clang)
#   make fuzz-long       run each harness for FUZZ_SECONDS (default 600)
#   make bench           build, then print benchmark figures (name=value lines)
#   make demo            build, then `maya run` a bundled workload on the default GPU
#   make install PREFIX=/usr/local DESTDIR=
#   make SAN=1           AddressSanitizer + UndefinedBehaviorSanitizer build
#   make WERROR=0        do not turn warnings into errors
#   make JOBS=1          one recipe at a time (default: as many as there are CPUs)
#
# Each stage keeps its own rules in <stage>/module.mk; this file holds what they share.

PREFIX  ?= /usr/local
DESTDIR ?=
B       := build
CUDA_HOME ?= /usr/local/cuda
NVCC    ?= $(CUDA_HOME)/bin/nvcc
CC      ?= gcc
PYTHON  ?= python3
VERSION := $(shell cat VERSION)
SAN     ?= 0
WERROR  ?= 1
JOBS    ?= $(shell nproc 2>/dev/null || echo 1)
MAKEFLAGS += -j$(JOBS)

CFLAGS_BASE := -std=gnu11 -O2 -g -fPIC -pthread -Iinclude -MMD -MP \
	-Wall -Wextra -Wshadow -Wno-unused-parameter -Wformat=2 \
	-DMAYA_VERSION='"$(VERSION)"'
ifeq ($(WERROR),1)
CFLAGS_BASE += -Werror
endif
LDFLAGS_BASE := -pthread
ifeq ($(SAN),1)
CFLAGS_BASE  += -fsanitize=address,undefined -fno-omit-frame-pointer
LDFLAGS_BASE += -fsanitize=address,undefined
endif
override CFLAGS  := $(CFLAGS_BASE) $(CFLAGS)
override LDFLAGS := $(LDFLAGS_BASE) $(LDFLAGS)

# Stand-in libraries hide everything but their API (version scripts name it).
LIB_CFLAGS := -fvisibility=hidden

# CUDA test workloads: real nvcc builds against the shared runtime.
NVCC_FLAGS ?= -cudart shared -arch=sm_90 -O2 -lineinfo

# The Debian packages the build needs; installed by scripts/deps.sh when missing.
DEPS_STAMP := $(B)/.deps-ok

.PHONY: all test test-frameworks-long bench demo install clean deps accuracy venv venv-torchtitan fidelity tools astra-check search-demo scale-check
all:

$(DEPS_STAMP): scripts/deps.sh
	@scripts/deps.sh
	@mkdir -p $(@D) && touch $@
deps: $(DEPS_STAMP)

# Generic rules: every object lives under build/obj/ mirroring the source tree.
$(B)/obj/%.o: %.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(EXTRA_CFLAGS) -c -o $@ $<

ALL_TARGETS :=
INSTALL_RULES :=

include common/module.mk
include hwspecs/module.mk
include emulator/module.mk
include emulator/profile/module.mk
include collator/module.mk
include estimator/module.mk
include sim/module.mk
include profile/module.mk
include search/module.mk
include src/module.mk
include spank_plugin/module.mk
include man/module.mk
include tests/module.mk
include fuzz/module.mk
include bench/module.mk

all: $(ALL_TARGETS)

# The PyTorch tests run with .venv (torch + triton from PyPI; scripts/venv.sh
# is idempotent and returns at once when the venv is already right).
venv:
	scripts/venv.sh

# nvdisasm for the tests of SASS-only kernels (scripts/nvdisasm.sh: into
# .tools/, idempotent, skipped without network).
tools:
	scripts/nvdisasm.sh

test: all venv-torchtitan tools fuzz
	tests/run

# torchtitan and the packages its trainer imports, in .venv-torchtitan/ (kept
# out of .venv: docs/compatibility.md); idempotent. After the venv, which
# the script would otherwise make at the same time as the venv target.
venv-torchtitan: venv
	scripts/venv.sh --torchtitan

# Larger framework runs than make test has time for (docs/compatibility.md):
# Megatron-core TP2 x PP2 with virtual stages, DeepSpeed ZeRO-1/2/offload,
# torchtitan with pipeline parallelism and in 3D, ...
test-frameworks-long: all venv-torchtitan
	tests/run --long frameworks

bench: all
	bench/run

# Duplicate-rank elimination at sizes too large for make test (docs/dedup.md):
# name=value lines; SCALE_CASES=... picks cases (tests/scale/scale_check.sh).
scale-check: all venv
	tests/scale/scale_check.sh

demo: all
	scripts/demo

# Published training runs re-created under maya (fidelity/run; not part of
# make test: tens of minutes). FIDELITY_* settings pass through the environment.
fidelity: all venv tools
	fidelity/run

# ASTRA-sim on a job maya exported as Chakra traces, against maya (sources
# fetched beforehand into .deps/astra-sim or ASTRA_SIM_SRC; skips without them).
astra-check: all
	scripts/astra_check.sh

# maya search on the reference knobs (scripts/search-reference): grid, pruned
# grid, random and CMA-ES on SEARCH_DEMO_GPUS (default 8 emulated H100s).
# SEARCH_DEMO_SPACE=demo (default, 64 combinations: minutes on 2 cores) or
# reference (384, the method's knobs: most of an hour there); trials kept in
# SEARCH_DEMO_OUT, so a second run is quick. SEARCH_DEMO_JOBS: grid trials at
# once. SEARCH_RUN_OPTS: options for every trial's maya run (e.g.
# duplicate-rank elimination).
SEARCH_DEMO_GPUS ?= h100x8
SEARCH_DEMO_SPACE ?= demo
SEARCH_DEMO_JOBS ?= 2
SEARCH_DEMO_OUT ?= $(B)/search-demo
search-demo: all
	scripts/search-reference --gpus $(SEARCH_DEMO_GPUS) --space $(SEARCH_DEMO_SPACE) \
		--jobs $(SEARCH_DEMO_JOBS) --out $(SEARCH_DEMO_OUT) $(foreach o,$(SEARCH_RUN_OPTS),--run-option=$(o))

install: all
	scripts/install "$(DESTDIR)$(PREFIX)" "$(B)"

clean:
	rm -rf $(B)

-include $(shell find $(B)/obj -name '*.d' 2>/dev/null)
