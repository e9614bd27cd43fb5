# tests/: CUDA C workloads (built with nvcc against the shared runtime) and
# C unit tests. Workloads land in build/tests/workloads/.
WORKLOAD_DIR  := $(B)/tests/workloads
WORKLOAD_SRCS := $(wildcard tests/workloads/*.cu)
WORKLOADS     := $(WORKLOAD_SRCS:tests/workloads/%.cu=$(WORKLOAD_DIR)/%)

# Per-workload extra libraries: WORKLOAD_LIBS_<name> := -lcublas ...
$(WORKLOAD_DIR)/%: tests/workloads/%.cu | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(NVCC) $(NVCC_FLAGS) -o $@ $< $(WORKLOAD_LIBS_$*)

ALL_TARGETS += $(WORKLOADS)
