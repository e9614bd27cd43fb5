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

# NCCL workloads (tests/nccl/): linked against the toolkit's libnccl, run
# against maya's.
NCCL_WORKLOADS := nccl_colls nccl_split nccl_mismatch
$(foreach w,$(NCCL_WORKLOADS),$(eval WORKLOAD_LIBS_$(w) := -lnccl))
$(NCCL_WORKLOADS:%=$(WORKLOAD_DIR)/%): tests/workloads/nccl_boot.h
