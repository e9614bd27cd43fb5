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

# Unit tests of the estimator (tests/run runs build/tests/unit/test_*).
EST_UNIT := $(B)/tests/unit/test_estimator
$(B)/obj/tests/estimator/unit_estimator.o: EXTRA_CFLAGS := -I$(CUDA_HOME)/include
$(EST_UNIT): $(B)/obj/tests/estimator/unit_estimator.o $(EST_LIB) $(COMMON_LIB)
	@mkdir -p $(@D)
	$(CC) -o $@ $^ $(LDFLAGS) $(COMMON_LIBS) $(EST_LDLIBS)
ALL_TARGETS += $(EST_UNIT)
