# estimator/: op durations (analytical, learned, oracle) as libmaya-estimator.a.
EST_SRCS := $(wildcard estimator/*.c)
EST_OBJS := $(EST_SRCS:%.c=$(B)/obj/%.o)
EST_LIB  := $(B)/obj/libmaya-estimator.a
EST_LDLIBS := -lm

$(EST_OBJS): EXTRA_CFLAGS := -I$(CUDA_HOME)/include

$(EST_LIB): $(EST_OBJS)
	@mkdir -p $(@D)
	$(AR) rcs $@ $^

CLI_LIBS += $(EST_LIB)
CLI_LDLIBS += $(EST_LDLIBS)
