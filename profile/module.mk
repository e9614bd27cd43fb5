# profile/: maya profile's parts (the GPU probe, the summary of a profile, the
# comparison of a prediction with a profile), linked into the maya command;
# src/cmd_profile.c is the command.
PROFILE_SRCS := $(wildcard profile/*.c)
