# sim/: the discrete-event simulator and the report writers, as libmaya-sim.a.
SIM_SRCS := $(wildcard sim/*.c)
SIM_OBJS := $(SIM_SRCS:%.c=$(B)/obj/%.o)
SIM_LIB  := $(B)/obj/libmaya-sim.a

$(SIM_OBJS): EXTRA_CFLAGS := -I$(CUDA_HOME)/include

$(SIM_LIB): $(SIM_OBJS)
	@mkdir -p $(@D)
	$(AR) rcs $@ $^

CLI_LIBS += $(SIM_LIB)
