# emulator/profile/: libmaya-profile.so, the passthrough profiler that
# `maya profile` preloads into a program running on real GPUs (prof.h).
#
# It carries its own copy of the core (CORE_OBJS, linked in and hidden by
# the version script), so that it never shares trace state with the
# emulator's libmaya-core.so: in the tests the "real" libraries it forwards
# to are the emulator's, and both write traces.
PROF_SRCS := $(wildcard emulator/profile/*.c)
PROF_OBJS := $(PROF_SRCS:%.c=$(B)/obj/%.o)
PROF_LIB  := $(EMU_LIBDIR)/libmaya-profile.so
# Default visibility: the wrappers are the library's exports (profile.map
# names them under the real libraries' version nodes).
$(PROF_OBJS): EXTRA_CFLAGS := $(EMU_CFLAGS) -Iemulator/profile -Iemulator/cudnn -Iemulator/driver

# What the emulated libraries know, built from the same objects and hidden
# here by the version script: cuDNN's backend graphs (the descriptor store
# and the recognition of what a graph runs: emulator/cudnn/be_store.h,
# be_trace.h) and what driver calls ask for (emulator/driver/calls.h).
PROF_SHARED_OBJS := $(addprefix $(B)/obj/emulator/cudnn/,be_store.o be_trace.o) \
	$(B)/obj/emulator/driver/calls.o

$(PROF_LIB): $(PROF_OBJS) $(PROF_SHARED_OBJS) $(CORE_OBJS) $(CORE_EST_OBJS) $(COMMON_LIB) emulator/profile/profile.map
	@mkdir -p $(@D)
	$(CC) -shared -o $@ $(PROF_OBJS) $(PROF_SHARED_OBJS) $(CORE_OBJS) $(CORE_EST_OBJS) $(COMMON_LIB) $(LDFLAGS) \
		-Wl,-soname,libmaya-profile.so -Wl,--version-script,emulator/profile/profile.map \
		-Wl,-z,defs -lconfuse -lz -llz4 -lzstd -ldl -lstdc++ -lm

ALL_TARGETS += $(PROF_LIB)

# What the profiler adds per call (make bench): bench/profile_bench runs the
# emulator's launch benchmark with the profiler preloaded.
$(B)/bench/profile_bench: bench/profile_bench $(B)/bench/cuda/launch_bench $(PROF_LIB)
	@mkdir -p $(@D)
	cp bench/profile_bench $@
ALL_TARGETS += $(B)/bench/profile_bench
