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
