# search/: maya search's space of configurations, strategies, trials and
# results (src/cmd_search.c is the command over it).
SEARCH_SRCS := $(wildcard search/*.c)
SEARCH_OBJS := $(SEARCH_SRCS:%.c=$(B)/obj/%.o)
SEARCH_LIB  := $(B)/obj/libmaya-search.a

$(SEARCH_OBJS): EXTRA_CFLAGS := -Isearch -Isrc

$(SEARCH_LIB): $(SEARCH_OBJS)
	@mkdir -p $(@D)
	$(AR) rcs $@ $^

CLI_LIBS += $(SEARCH_LIB)
