# bench/: benchmarks. `make bench` runs bench/run, which runs every program in
# build/bench/ (other stages add theirs from their own module.mk).

# The emulator's host cost per call: an nvcc-built program (build/bench/cuda/,
# not run directly) and the script that runs it under the emulator.
EMU_BENCH_CU := $(B)/bench/cuda/launch_bench
$(EMU_BENCH_CU): bench/launch_bench.cu tests/workloads/rt_check.h | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(NVCC) $(NVCC_FLAGS) -o $@ $<
$(B)/bench/emu_bench: bench/emu_bench $(EMU_BENCH_CU)
	@mkdir -p $(@D)
	cp bench/emu_bench $@
ALL_TARGETS += $(EMU_BENCH_CU) $(B)/bench/emu_bench

# What reading kernels' work from PTX and SASS costs a rank (first launches,
# timed in an nvcc-built program with SASS only, run under the emulator).
KWORK_FIRST_CU := $(B)/bench/cuda/kwork_first_launch
$(KWORK_FIRST_CU): bench/kwork_first_launch.cu tests/workloads/kernel_work.cu tests/workloads/rt_check.h | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(NVCC) -cudart shared -gencode arch=compute_90,code=sm_90 -O2 -o $@ $<
$(B)/bench/kernel_work: bench/kernel_work.sh $(KWORK_FIRST_CU)
	@mkdir -p $(@D)
	cp $< $@
ALL_TARGETS += $(KWORK_FIRST_CU) $(B)/bench/kernel_work

# The cost of emulating a PyTorch DDP training step (needs .venv; prints
# "skipped" without it).
$(B)/bench/torch_ddp_step: bench/torch_ddp_step.sh
	@mkdir -p $(@D)
	cp $< $@
ALL_TARGETS += $(B)/bench/torch_ddp_step

# The host clock under CPU contention (MAYA_HOST_CLOCK wall, active and cpu): minigpt's
# predicted iteration with other ranks and busy processes on the CPUs.
$(B)/bench/host_clock: bench/host_clock.sh
	@mkdir -p $(@D)
	cp $< $@
ALL_TARGETS += $(B)/bench/host_clock

# A search's trials as a Slurm job array against local processes: the
# array's overhead per trial on a real test cluster (needs root, slurm-wlm
# and munge; prints "skipped" without them).
$(B)/bench/search_slurm: bench/search_slurm.sh
	@mkdir -p $(@D)
	cp $< $@
ALL_TARGETS += $(B)/bench/search_slurm
