# collator/: reading traces, merging ranks, matching collectives.
COLLATOR_SRCS := $(wildcard collator/*.c)
COLLATOR_OBJS := $(COLLATOR_SRCS:%.c=$(B)/obj/%.o)
COLLATOR_LIB  := $(B)/obj/libmaya-collator.a

$(COLLATOR_LIB): $(COLLATOR_OBJS)
	@mkdir -p $(@D)
	$(AR) rcs $@ $^
