# src/: the maya command.
MAYA_BIN  := $(B)/bin/maya
CLI_SRCS  := $(wildcard src/*.c) $(PROFILE_SRCS)
CLI_OBJS  := $(CLI_SRCS:%.c=$(B)/obj/%.o)
# Stage libraries the CLI links; each stage's module.mk appends its own.
CLI_LIBS  += $(COLLATOR_LIB) $(COMMON_LIB)
CLI_LDLIBS += $(COMMON_LIBS) -lz -lm

$(CLI_OBJS): EXTRA_CFLAGS := -I$(CUDA_HOME)/include -Isrc -Iprofile -Isearch

$(MAYA_BIN): $(CLI_OBJS) $(CLI_LIBS)
	@mkdir -p $(@D)
	$(CC) -o $@ $(CLI_OBJS) $(CLI_LIBS) $(LDFLAGS) $(CLI_LDLIBS)

ALL_TARGETS += $(MAYA_BIN)
