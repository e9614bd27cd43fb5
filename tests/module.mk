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

# The runtime workloads share tests/workloads/rt_check.h.
$(WORKLOADS): tests/workloads/rt_check.h

# Built for per-thread default streams (the runtime's _ptsz/_ptds entry points).
WORKLOAD_LIBS_ptds_streams := --default-stream per-thread

# NCCL workloads (tests/nccl/): linked against the toolkit's libnccl, run
# against maya's.
NCCL_WORKLOADS := nccl_colls nccl_split nccl_mismatch nccl_bench nccl_graph nccl_perf minigpt event_standin faults
$(foreach w,$(NCCL_WORKLOADS),$(eval WORKLOAD_LIBS_$(w) := -lnccl))
$(NCCL_WORKLOADS:%=$(WORKLOAD_DIR)/%): tests/workloads/nccl_boot.h
WORKLOAD_LIBS_minigpt += -lcublasLt
$(WORKLOAD_DIR)/minigpt: tests/workloads/flash_attention.cuh
WORKLOAD_LIBS_nccl_graph += -lcublas

# The emulated NCCL's benchmark (make bench runs build/bench/*).
$(B)/bench/nccl_bench: bench/nccl_bench.sh
	@mkdir -p $(@D)
	cp $< $@
ALL_TARGETS += $(B)/bench/nccl_bench

# Workloads built again with compressed fat binaries (every entry Zstd, or
# LZ4 with -compress-mode=speed), for the kernel-parameter decoder.
COMPRESSED_WORKLOADS := kernel_params
$(WORKLOAD_DIR)/%_zstd: tests/workloads/%.cu | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(NVCC) $(NVCC_FLAGS) -Xfatbin -compress-all -o $@ $< $(WORKLOAD_LIBS_$*)
$(WORKLOAD_DIR)/%_lz4: tests/workloads/%.cu | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(NVCC) $(NVCC_FLAGS) -Xfatbin -compress-all -Xfatbin -compress-mode=speed -o $@ $< $(WORKLOAD_LIBS_$*)
ALL_TARGETS += $(foreach w,$(COMPRESSED_WORKLOADS),$(WORKLOAD_DIR)/$(w)_zstd $(WORKLOAD_DIR)/$(w)_lz4)

# kernel_work again with SASS only (no PTX), as PyTorch's kernels come: its
# kernels' work is read through nvdisasm.
$(WORKLOAD_DIR)/kernel_work_sass: tests/workloads/kernel_work.cu tests/workloads/rt_check.h | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(NVCC) -cudart shared -gencode arch=compute_90,code=sm_90 -O2 -o $@ $<
ALL_TARGETS += $(WORKLOAD_DIR)/kernel_work_sass

# Device code that driver-API workloads load at run time
# (tests/workloads/modules/*.cu): a cubin, a debug cubin (-G: it carries its
# PTX, as Triton's do), PTX, and fat binaries with nvcc's default
# compression, with every entry Zstd, and with every entry LZ4.
MODULE_ARCH := -arch=sm_90
MODULE_NAMES := $(notdir $(basename $(wildcard tests/workloads/modules/*.cu)))
$(WORKLOAD_DIR)/%.cubin: tests/workloads/modules/%.cu | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(NVCC) $(MODULE_ARCH) -cubin -o $@ $<
$(WORKLOAD_DIR)/%.G.cubin: tests/workloads/modules/%.cu | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(NVCC) $(MODULE_ARCH) -cubin -G -o $@ $<
$(WORKLOAD_DIR)/%.ptx: tests/workloads/modules/%.cu | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(NVCC) $(MODULE_ARCH) -ptx -o $@ $<
$(WORKLOAD_DIR)/%.fatbin: tests/workloads/modules/%.cu | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(NVCC) $(MODULE_ARCH) -fatbin -o $@ $<
$(WORKLOAD_DIR)/%.zstd.fatbin: tests/workloads/modules/%.cu | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(NVCC) $(MODULE_ARCH) -fatbin -Xfatbin -compress-all -o $@ $<
$(WORKLOAD_DIR)/%.lz4.fatbin: tests/workloads/modules/%.cu | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(NVCC) $(MODULE_ARCH) -fatbin -Xfatbin -compress-all -Xfatbin -compress-mode=speed -o $@ $<
ALL_TARGETS += $(foreach m,$(MODULE_NAMES),$(addprefix $(WORKLOAD_DIR)/$(m),.cubin .G.cubin .ptx .fatbin .zstd.fatbin .lz4.fatbin))

# Driver-API workloads link libcuda (the toolkit's stub at build time; the
# emulator's libcuda.so.1 at run time).
DRIVER_LINK := -L$(CUDA_HOME)/lib64/stubs -lcuda
WORKLOAD_LIBS_drv_modules := $(DRIVER_LINK)
WORKLOAD_LIBS_drv_memory := $(DRIVER_LINK)
WORKLOAD_LIBS_drv_device := $(DRIVER_LINK)
WORKLOAD_LIBS_drv_procaddr := $(DRIVER_LINK) -ldl
WORKLOAD_LIBS_drv_graphs := $(DRIVER_LINK)
$(addprefix $(WORKLOAD_DIR)/,drv_modules drv_memory drv_procaddr drv_device drv_graphs): tests/workloads/drv_check.h

# C unit tests: tests/<area>/test_*.c -> build/tests/unit/test_* (tests/run runs
# them), linked with every stage library; -Itests lets an area share a helper header.
UNIT_SRCS  := $(wildcard tests/*/test_*.c)
UNIT_TESTS := $(patsubst %.c,$(B)/tests/unit/%,$(notdir $(UNIT_SRCS)))
UNIT_LIBS  := $(SIM_LIB) $(EST_LIB) $(COLLATOR_LIB) $(COMMON_LIB)
vpath test_%.c $(sort $(dir $(UNIT_SRCS)))

$(B)/tests/unit/test_%: test_%.c $(UNIT_LIBS) | $(DEPS_STAMP)
	@mkdir -p $(@D) $(B)/obj/tests/unit
	$(CC) $(CFLAGS) -MF $(B)/obj/tests/unit/test_$*.d -I$(CUDA_HOME)/include -Itests -o $@ $< \
		$(UNIT_OBJS_$*) $(UNIT_LIBS) $(LDFLAGS) $(EST_LDLIBS) $(COMMON_LIBS) -lz -lm

# A unit test of the maya command's own files links their objects:
# UNIT_OBJS_<name> := ... and the prerequisite line.
UNIT_OBJS_cmaes_core := $(B)/obj/search/cmaes.o $(B)/obj/search/space.o
$(B)/tests/unit/test_cmaes_core: $(UNIT_OBJS_cmaes_core)
UNIT_OBJS_spank_security := $(B)/obj/spank_plugin/spank_option.o
$(B)/tests/unit/test_spank_security: $(UNIT_OBJS_spank_security)
UNIT_OBJS_stand_in_store := $(B)/obj/src/replica_stand_in.o
$(B)/tests/unit/test_stand_in_store: $(UNIT_OBJS_stand_in_store)

ALL_TARGETS += $(UNIT_TESTS)

# cuBLAS / cuBLASLt / cuDNN workloads (tests/libs/): linked against the
# toolkit's libraries, run against maya's.
WORKLOAD_LIBS_gemm_cublas := -lcublas
WORKLOAD_LIBS_gemm_lt := -lcublasLt -lcublas
WORKLOAD_LIBS_cudnn_legacy := -lcudnn
WORKLOAD_LIBS_cudnn_graph := -lcudnn
WORKLOAD_LIBS_lib_graphs := -lcublas -lcublasLt -lcudnn

# NVML workload: dlopens libnvidia-ml.so.1, with the stand-in's API header.
WORKLOAD_LIBS_nvml_query := -Iemulator/nvml -ldl
$(WORKLOAD_DIR)/nvml_query: emulator/nvml/nvml_types.h

# The folding test builds its jobs with the benchmarks' GPT trace generator.
UNIT_OBJS_sim_fold := $(GPT_TRACES_OBJ)
$(B)/tests/unit/test_sim_fold: $(UNIT_OBJS_sim_fold)

# vector_add linked with the static CUDA runtime, nvcc's default: maya says
# that it emulates the shared one and how to build for it
# (tests/emulator/test_static_runtime.sh).
$(WORKLOAD_DIR)/vector_add_static: tests/workloads/vector_add.cu tests/workloads/rt_check.h | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(NVCC) $(filter-out -cudart shared,$(NVCC_FLAGS)) -cudart static -o $@ $<
ALL_TARGETS += $(WORKLOAD_DIR)/vector_add_static
