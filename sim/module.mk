# sim/: the discrete-event simulator and the report writers, as libmaya-sim.a.
SIM_SRCS := $(wildcard sim/*.c)
SIM_OBJS := $(SIM_SRCS:%.c=$(B)/obj/%.o)
SIM_LIB  := $(B)/obj/libmaya-sim.a

$(SIM_OBJS): EXTRA_CFLAGS := -I$(CUDA_HOME)/include

$(SIM_LIB): $(SIM_OBJS)
	@mkdir -p $(@D)
	$(AR) rcs $@ $^

CLI_LIBS += $(SIM_LIB)

# Simulator throughput (make bench runs build/bench/*).
SIM_BENCH := $(B)/bench/sim_bench
$(B)/obj/bench/sim_bench.o: EXTRA_CFLAGS := -I$(CUDA_HOME)/include
$(SIM_BENCH): $(B)/obj/bench/sim_bench.o $(SIM_LIB) $(COLLATOR_LIB) $(COMMON_LIB)
	@mkdir -p $(@D)
	$(CC) -o $@ $< $(SIM_LIB) $(COLLATOR_LIB) $(COMMON_LIB) $(LDFLAGS) $(COMMON_LIBS) -lz -lm
ALL_TARGETS += $(SIM_BENCH)

# Post-processing at scale: GPT-3-shaped jobs of 1k, 4k and 16k ranks from
# their traces to the report (bench/scale_bench.c); the traces come from
# bench/gpt_traces.c, which the simulator's tests use too.
GPT_TRACES_OBJ := $(B)/obj/bench/gpt_traces.o
SCALE_BENCH := $(B)/bench/scale_bench
# (and the check maya report makes before reusing a job trace: src/job_reuse.c)
JOB_REUSE_OBJ := $(B)/obj/src/job_reuse.o
$(B)/obj/bench/scale_bench.o $(GPT_TRACES_OBJ): EXTRA_CFLAGS := -I$(CUDA_HOME)/include -Isrc
$(SCALE_BENCH): $(B)/obj/bench/scale_bench.o $(GPT_TRACES_OBJ) $(JOB_REUSE_OBJ) $(SIM_LIB) $(EST_LIB) $(COLLATOR_LIB) $(COMMON_LIB)
	@mkdir -p $(@D)
	$(CC) -o $@ $< $(GPT_TRACES_OBJ) $(JOB_REUSE_OBJ) $(SIM_LIB) $(EST_LIB) $(COLLATOR_LIB) $(COMMON_LIB) $(LDFLAGS) $(EST_LDLIBS) $(COMMON_LIBS) -lz -lm
ALL_TARGETS += $(SCALE_BENCH)

# The generator as a command, for shell tests (tests/runs/test_report_scale.sh).
GPT_TRACES_TOOL := $(B)/tests/tools/gpt_traces
$(B)/obj/bench/gpt_traces_cli.o: EXTRA_CFLAGS := -I$(CUDA_HOME)/include
$(GPT_TRACES_TOOL): $(B)/obj/bench/gpt_traces_cli.o $(GPT_TRACES_OBJ) $(COLLATOR_LIB) $(COMMON_LIB)
	@mkdir -p $(@D)
	$(CC) -o $@ $^ $(LDFLAGS) $(COMMON_LIBS) -lz -lm
ALL_TARGETS += $(GPT_TRACES_TOOL)
