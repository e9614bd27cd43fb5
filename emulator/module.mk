# emulator/: the core (libmaya-core.so) and the stand-in CUDA libraries.
#
# Every stand-in is built the same way (see STANDIN below): its sources, plus
# weak "not supported" definitions of every symbol in its .symbols list, linked
# with a version script made from the same list, against the core.

EMU_LIBDIR := $(B)/lib/maya
EMU_GEN    := $(B)/gen/emulator
EMU_CFLAGS := -I$(CUDA_HOME)/include -Iemulator/core -I$(EMU_GEN)

CORE_SRCS := $(wildcard emulator/core/*.c)
CORE_OBJS := $(CORE_SRCS:%.c=$(B)/obj/%.o)
CORE_LIB  := $(EMU_LIBDIR)/libmaya-core.so
$(CORE_OBJS): EXTRA_CFLAGS := $(EMU_CFLAGS) $(LIB_CFLAGS)

# The device clock (core/device_clock.c) times events with the estimator's
# analytical model: only those objects, no learned models (XGBoost).
CORE_EST_OBJS := $(addprefix $(B)/obj/estimator/,describe.o analytical.o collectives.o nccl_env.o host.o kernel_cost.o)
$(B)/obj/emulator/core/device_clock.o: EXTRA_CFLAGS += -Iestimator

$(CORE_LIB): $(CORE_OBJS) $(CORE_EST_OBJS) $(COMMON_LIB) emulator/core/core.map
	@mkdir -p $(@D)
	$(CC) -shared -o $@ $(CORE_OBJS) $(CORE_EST_OBJS) $(COMMON_LIB) $(LDFLAGS) \
		-Wl,-soname,libmaya-core.so -Wl,--version-script,emulator/core/core.map \
		-Wl,-z,defs -lconfuse -lz -llz4 -lzstd -ldl -lstdc++ -lm

# $(call STANDIN,name,soname,dir,version-node,error-code,extra-libs)
define STANDIN
$(1)_SRCS := $$(wildcard emulator/$(3)/*.c)
$(1)_OBJS := $$($(1)_SRCS:%.c=$(B)/obj/%.o) $(B)/obj/gen/$(1)_stubs.o
$$($(1)_SRCS:%.c=$(B)/obj/%.o): EXTRA_CFLAGS := $(EMU_CFLAGS) -Iemulator/$(3)

# One run of gen_stubs.sh writes both files: a grouped target (&:), or make -j
# runs it twice at once and the two runs trip over each other's temp files.
$(EMU_GEN)/$(1)_stubs.c $(EMU_GEN)/$(1).map &: emulator/$(3)/$(1).symbols emulator/gen_stubs.sh
	@mkdir -p $(EMU_GEN)
	emulator/gen_stubs.sh emulator/$(3)/$(1).symbols "$(4)" "$(5)" $(EMU_GEN)/$(1)_stubs.c $(EMU_GEN)/$(1).map

$(B)/obj/gen/$(1)_stubs.o: $(EMU_GEN)/$(1)_stubs.c | $(DEPS_STAMP)
	@mkdir -p $$(@D)
	$(CC) $(CFLAGS) $(EMU_CFLAGS) -w -c -o $$@ $$<

$(EMU_LIBDIR)/$(2): $$($(1)_OBJS) $(EMU_GEN)/$(1).map $(CORE_LIB)
	@mkdir -p $$(@D)
	$(CC) -shared -o $$@ $$($(1)_OBJS) $(LDFLAGS) -Wl,-soname,$(2) \
		-Wl,--version-script,$(EMU_GEN)/$(1).map -Wl,-z,defs \
		-L$(EMU_LIBDIR) -lmaya-core -Wl,-rpath,'$$$$ORIGIN' $(6)

ALL_TARGETS += $(EMU_LIBDIR)/$(2)
endef

$(eval $(call STANDIN,cudart,libcudart.so.13,cudart,libcudart.so.13,801,))
$(eval $(call STANDIN,driver,libcuda.so.1,driver,,801,$(COMMON_LIB) -ldl))
$(eval $(call STANDIN,nccl,libnccl.so.2,nccl,,5,-lm))
# Libraries PyTorch links that maya does not model (FFT, sparse, solvers,
# run-time compilation, profiling, GPUDirect Storage, NVSHMEM): version
# queries and handles are real, the rest return the library's not-supported
# code (CUFFT_NOT_SUPPORTED, CUSPARSE_STATUS_NOT_SUPPORTED, ...).
$(eval $(call STANDIN,cufft,libcufft.so.12,cufft,libcufft.so.12,16,))
$(eval $(call STANDIN,cusparse,libcusparse.so.12,cusparse,libcusparse.so.12,10,))
$(eval $(call STANDIN,cusolver,libcusolver.so.12,cusolver,libcusolver.so.12,9,))
$(eval $(call STANDIN,nvrtc,libnvrtc.so.13,nvrtc,libnvrtc.so.13,11,))
$(eval $(call STANDIN,cupti,libcupti.so.13,cupti,libcupti.so.13,27,))
$(eval $(call STANDIN,cufile,libcufile.so.0,cufile,,5007,))
$(eval $(call STANDIN,cusparselt,libcusparseLt.so.0,cusparselt,,10,))
$(eval $(call STANDIN,nvshmem,libnvshmem_host.so.3,nvshmem,NVSHMEM,3,))
# NVML (libnvidia-ml.so.1, unversioned like the real one): the node's GPUs as
# nvidia-smi sees them; the rest returns NVML_ERROR_NOT_SUPPORTED (3).
$(eval $(call STANDIN,nvml,libnvidia-ml.so.1,nvml,,3,))

# cuBLAS and cuBLASLt: GEMMs traced with their whole problem; anything not
# implemented returns CUBLAS_STATUS_NOT_SUPPORTED (15).
$(eval $(call STANDIN,cublas,libcublas.so.13,cublas,libcublas.so.13,15,-lm))
$(eval $(call STANDIN,cublasLt,libcublasLt.so.13,cublasLt,libcublasLt.so.13,15,))

# cuDNN: libcudnn.so.9 and the sub-libraries real programs link or load,
# each with its own soname, version node and exports. The implementation
# (emulator/cudnn/) is linked into libcudnn.so.9 and into the sub-libraries
# that export the same C functions (graph: handles and the backend API;
# ops, cnn, adv: the legacy API); the others only have their stubs.
# Unimplemented calls return CUDNN_STATUS_NOT_SUPPORTED (3000).
$(eval $(call STANDIN,cudnn,libcudnn.so.9,cudnn,libcudnn.so.9,3000,-lm))
$(EMU_GEN)/cudnn_status.inc: $(CUDA_HOME)/include/cudnn_graph.h
	@mkdir -p $(@D)
	sed -n 's/^ *\(CUDNN_STATUS_[A-Z0-9_]*\)[A-Z_ ]* *= *\([0-9][0-9]*\).*/    { "\1", \2 },/p' $< > $@.tmp && mv $@.tmp $@
$(B)/obj/emulator/cudnn/handle.o: $(EMU_GEN)/cudnn_status.inc
CUDNN_IMPL_OBJS := $(filter-out $(B)/obj/gen/%,$(cudnn_OBJS))
$(foreach l,graph ops cnn adv,$(eval $(call STANDIN,cudnn_$(l),libcudnn_$(l).so.9,cudnn_$(l),libcudnn_$(l).so.9,3000,-lm)) \
	$(eval cudnn_$(l)_OBJS += $(CUDNN_IMPL_OBJS)) $(eval $(EMU_LIBDIR)/libcudnn_$(l).so.9: $(CUDNN_IMPL_OBJS)))
$(foreach l,engines_precompiled engines_runtime_compiled heuristic,\
	$(eval $(call STANDIN,cudnn_$(l),libcudnn_$(l).so.9,cudnn_$(l),libcudnn_$(l).so.9,3000,)))

# The NVTX injection library (NVTX_INJECTION64_PATH): a program's NVTX
# marks and ranges become MARKER records (emulator/nvtx/nvtx.c).
NVTX_SRCS := emulator/nvtx/nvtx.c
NVTX_OBJS := $(NVTX_SRCS:%.c=$(B)/obj/%.o)
NVTX_LIB  := $(EMU_LIBDIR)/libmaya-nvtx.so
$(NVTX_OBJS): EXTRA_CFLAGS := $(EMU_CFLAGS) $(LIB_CFLAGS)
$(NVTX_LIB): $(NVTX_OBJS) $(CORE_LIB) $(COMMON_LIB) emulator/nvtx/nvtx.map
	@mkdir -p $(@D)
	$(CC) -shared -o $@ $(NVTX_OBJS) $(COMMON_LIB) $(LDFLAGS) -Wl,-soname,libmaya-nvtx.so \
		-Wl,--version-script,emulator/nvtx/nvtx.map -Wl,-z,defs \
		-L$(EMU_LIBDIR) -lmaya-core -Wl,-rpath,'$$ORIGIN'
ALL_TARGETS += $(NVTX_LIB)

# Unversioned names (libcuda.so, libcudart.so) for programs and tools that
# link or dlopen without the version (e.g. Triton's launcher with -lcuda).
$(EMU_LIBDIR)/libcuda.so: $(EMU_LIBDIR)/libcuda.so.1
	ln -sf libcuda.so.1 $@
$(EMU_LIBDIR)/libcudart.so: $(EMU_LIBDIR)/libcudart.so.13
	ln -sf libcudart.so.13 $@

$(EMU_LIBDIR)/libnccl.so: $(EMU_LIBDIR)/libnccl.so.2
	ln -sf libnccl.so.2 $@

ALL_TARGETS += $(CORE_LIB) $(EMU_LIBDIR)/libcuda.so $(EMU_LIBDIR)/libcudart.so $(EMU_LIBDIR)/libnccl.so

# Error-name tables from the installed headers.
$(EMU_GEN)/cudart_errors.inc: emulator/gen_enum_names.sh $(CUDA_HOME)/include/driver_types.h
	@mkdir -p $(@D)
	emulator/gen_enum_names.sh $(CUDA_HOME)/include/driver_types.h "enum __device_builtin__ cudaError" > $@.tmp && mv $@.tmp $@
$(EMU_GEN)/driver_errors.inc: emulator/gen_enum_names.sh $(CUDA_HOME)/include/cuda.h
	@mkdir -p $(@D)
	emulator/gen_enum_names.sh $(CUDA_HOME)/include/cuda.h "typedef enum cudaError_enum" > $@.tmp && mv $@.tmp $@
$(B)/obj/emulator/cudart/error.o: $(EMU_GEN)/cudart_errors.inc
$(B)/obj/emulator/driver/device.o: $(EMU_GEN)/driver_errors.inc

# The driver's cuGetProcAddress table: from its symbol list and the toolkit's
# versioned function typedefs.
$(EMU_GEN)/driver_procaddr.c: emulator/driver/gen_procaddr.sh emulator/driver/driver.symbols
	@mkdir -p $(@D)
	emulator/driver/gen_procaddr.sh emulator/driver/driver.symbols $@ $(wildcard $(CUDA_HOME)/include/*Typedefs.h)
$(B)/obj/gen/driver_procaddr.o: $(EMU_GEN)/driver_procaddr.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Iemulator/driver -c -o $@ $<
driver_OBJS += $(B)/obj/gen/driver_procaddr.o
$(EMU_LIBDIR)/libcuda.so.1: $(B)/obj/gen/driver_procaddr.o

# Unit test of the PTX instruction-class counts (core/ptx_ops.c), built from
# the source since the core hides its internals.
PTX_UNIT := $(B)/tests/unit/test_ptx_ops
$(B)/obj/tests/torch/unit_ptx_ops.o: EXTRA_CFLAGS := -Iemulator/core
$(PTX_UNIT): $(B)/obj/tests/torch/unit_ptx_ops.o $(B)/obj/emulator/core/ptx_ops.o $(B)/obj/emulator/core/ptx_parse.o
	@mkdir -p $(@D)
	$(CC) -o $@ $^ $(LDFLAGS)
ALL_TARGETS += $(PTX_UNIT)

# Unit test of the PTX executor (core/ptx_exec.c) on hand-written kernels
# and damaged PTX, built from its objects (the core hides its internals).
PTX_EXEC_UNIT := $(B)/tests/unit/test_ptx_exec
$(B)/obj/tests/emulator/unit_ptx_exec.o: EXTRA_CFLAGS := -Iemulator/core
$(PTX_EXEC_UNIT): $(B)/obj/tests/emulator/unit_ptx_exec.o $(B)/obj/emulator/core/ptx_exec.o \
		$(B)/obj/emulator/core/ptx_parse.o $(B)/obj/emulator/core/exec_common.o
	@mkdir -p $(@D)
	$(CC) -o $@ $^ $(LDFLAGS) -lm
ALL_TARGETS += $(PTX_EXEC_UNIT)
# Unit test of the SASS executor (core/sass_exec.c) on kernels written as
# nvdisasm prints them
SASS_EXEC_UNIT := $(B)/tests/unit/test_sass_exec
$(B)/obj/tests/emulator/unit_sass_exec.o: EXTRA_CFLAGS := -Iemulator/core
$(SASS_EXEC_UNIT): $(B)/obj/tests/emulator/unit_sass_exec.o $(B)/obj/emulator/core/sass_exec.o $(B)/obj/emulator/core/sass_decode.o \
		$(B)/obj/emulator/core/sass_parse.o $(B)/obj/emulator/core/ptx_parse.o $(B)/obj/emulator/core/exec_common.o \
		$(B)/obj/emulator/core/float_formats.o
	@mkdir -p $(@D)
	$(CC) -o $@ $^ $(LDFLAGS) -lm
ALL_TARGETS += $(SASS_EXEC_UNIT)
# Unit tests of reading kernels' work from PTX and from SASS (core/ptx_parse.c,
# sass_parse.c, kernel_work.c) and of evaluating it per launch
# (estimator/kernel_cost.c); tests/emulator/kwork_fixture.h is what they share.
KWORK_UNIT := $(B)/tests/unit/test_kernel_work
KWORK_SASS_UNIT := $(B)/tests/unit/test_kernel_work_sass
KWORK_UNIT_OBJS := $(B)/obj/emulator/core/ptx_parse.o \
		$(B)/obj/emulator/core/sass_parse.o $(B)/obj/emulator/core/kernel_work.o $(B)/obj/emulator/core/kernel_value.o \
		$(B)/obj/emulator/core/kernel_expr.o $(B)/obj/emulator/core/kernel_shared.o $(B)/obj/emulator/core/kernel_loops.o \
		$(B)/obj/libmaya-estimator.a $(B)/obj/libmaya-common.a
$(B)/obj/tests/emulator/unit_kernel_work.o $(B)/obj/tests/emulator/unit_kernel_work_sass.o: EXTRA_CFLAGS := $(EMU_CFLAGS) -Iestimator
$(KWORK_UNIT): $(B)/obj/tests/emulator/unit_kernel_work.o $(KWORK_UNIT_OBJS)
	@mkdir -p $(@D)
	$(CC) -o $@ $^ $(LDFLAGS) $(COMMON_LIBS)
$(KWORK_SASS_UNIT): $(B)/obj/tests/emulator/unit_kernel_work_sass.o $(KWORK_UNIT_OBJS)
	@mkdir -p $(@D)
	$(CC) -o $@ $^ $(LDFLAGS) $(COMMON_LIBS)
ALL_TARGETS += $(KWORK_UNIT) $(KWORK_SASS_UNIT)

# Benchmark of the same analysis in the process (make bench): each kernel of
# tests/workloads/kernel_work.cu from its PTX, which is built beside it.
KWORK_BENCH := $(B)/bench/kwork_bench
$(B)/bench/kernel_work.ptx: tests/workloads/kernel_work.cu tests/workloads/rt_check.h | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(NVCC) -arch=sm_90 -ptx -o $@ $<
$(B)/obj/bench/kwork_bench.o: EXTRA_CFLAGS := $(EMU_CFLAGS)
$(KWORK_BENCH): $(B)/obj/bench/kwork_bench.o $(B)/obj/emulator/core/ptx_parse.o $(B)/obj/emulator/core/sass_parse.o \
		$(B)/obj/emulator/core/kernel_work.o $(B)/obj/emulator/core/kernel_value.o $(B)/obj/emulator/core/kernel_expr.o \
		$(B)/obj/emulator/core/kernel_shared.o $(B)/obj/emulator/core/kernel_loops.o $(B)/obj/libmaya-common.a | $(B)/bench/kernel_work.ptx
	@mkdir -p $(@D)
	$(CC) -o $@ $(filter %.o %.a,$^) $(LDFLAGS) $(COMMON_LIBS)
ALL_TARGETS += $(KWORK_BENCH) $(B)/bench/kernel_work.ptx

# Unit test of the fat binary reader (core/fatbin.c, kernel_layout.c,
# module_symbols.c) on the nvcc-built
# modules and programs of tests/module.mk, with truncation and corruption.
FATBIN_UNIT := $(B)/tests/unit/test_fatbin
$(B)/obj/tests/emulator/unit_fatbin.o: EXTRA_CFLAGS := $(EMU_CFLAGS)
$(FATBIN_UNIT): $(B)/obj/tests/emulator/unit_fatbin.o $(CORE_LIB)
	@mkdir -p $(@D)
	$(CC) -o $@ $< $(LDFLAGS) -L$(EMU_LIBDIR) -lmaya-core -Wl,-rpath,'$$ORIGIN/../../lib/maya'
ALL_TARGETS += $(FATBIN_UNIT)
