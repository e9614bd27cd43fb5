# spank_plugin/: the Slurm SPANK plugin (spank_maya.so, --maya-emulate) and
# maya-launch, the program each task of an emulated step becomes.
#
# Built against the installed Slurm headers (Debian: libslurm-dev 22.05); a
# SPANK plugin must be rebuilt for another Slurm major release. The plugin
# does not link libslurm: the slurm_* functions it calls come from the
# process that loads it (srun, sbatch, salloc, slurmd, slurmstepd all carry
# libslurmfull).

SPANK_SO     := $(B)/lib/slurm/spank_maya.so
SPANK_LAUNCH := $(EMU_LIBDIR)/maya-launch
SPANK_SRCS   := $(filter-out spank_plugin/maya_launch.c spank_plugin/pin.c,$(wildcard spank_plugin/*.c))
SPANK_OBJS   := $(SPANK_SRCS:%.c=$(B)/obj/%.o)
LAUNCH_SRCS  := spank_plugin/maya_launch.c spank_plugin/pin.c
LAUNCH_OBJS  := $(LAUNCH_SRCS:%.c=$(B)/obj/%.o)

$(SPANK_OBJS) $(LAUNCH_OBJS): EXTRA_CFLAGS := -I$(CUDA_HOME)/include $(LIB_CFLAGS)
# The entry points' file has default visibility: the version script decides.
$(B)/obj/spank_plugin/spank_maya.o: EXTRA_CFLAGS := -I$(CUDA_HOME)/include

$(SPANK_SO): $(SPANK_OBJS) $(COMMON_LIB) spank_plugin/spank_maya.map
	@mkdir -p $(@D)
	$(CC) -shared -o $@ $(SPANK_OBJS) $(COMMON_LIB) $(LDFLAGS) \
		-Wl,--version-script,spank_plugin/spank_maya.map $(COMMON_LIBS)

# The collator's library for the watchdog's names of collectives.
$(SPANK_LAUNCH): $(LAUNCH_OBJS) $(COLLATOR_LIB) $(COMMON_LIB)
	@mkdir -p $(@D)
	$(CC) -o $@ $(LAUNCH_OBJS) $(COMMON_LIB) $(COLLATOR_LIB) $(COMMON_LIB) $(LDFLAGS) -lhwloc $(COMMON_LIBS) -lz

ALL_TARGETS += $(SPANK_SO) $(SPANK_LAUNCH)
