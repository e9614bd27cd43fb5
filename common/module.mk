# common/: helpers every stage links (errors, parsing, atomic files, hwspecs).
COMMON_SRCS := common/util.c common/hwspec.c common/config.c common/run_desc.c common/run_specs.c common/map.c \
               common/confuse_parse.c common/run_elim.c common/run_watchdog.c common/schedstat.c common/kwork.c common/progress.c \
               common/chunk_codec.c
COMMON_OBJS := $(COMMON_SRCS:%.c=$(B)/obj/%.o)
COMMON_LIB  := $(B)/obj/libmaya-common.a
COMMON_LIBS := -lconfuse -lzstd -lz -ldl -lm

$(COMMON_OBJS): EXTRA_CFLAGS := -I$(CUDA_HOME)/include

$(COMMON_LIB): $(COMMON_OBJS)
	@mkdir -p $(@D)
	$(AR) rcs $@ $^
