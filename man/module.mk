# man/: manual pages, copied into build/share/man/manN/ (installed with the rest of build/).
MAN_PAGES := $(wildcard man/*.[1-8])
MAN_OUT   := $(foreach p,$(MAN_PAGES),$(B)/share/man/man$(subst .,,$(suffix $(p)))/$(notdir $(p)))

define MAN_RULE
$(B)/share/man/man$(subst .,,$(suffix $(1)))/$(notdir $(1)): $(1)
	@mkdir -p $$(@D)
	cp $$< $$@
endef
$(foreach p,$(MAN_PAGES),$(eval $(call MAN_RULE,$(p))))

ALL_TARGETS += $(MAN_OUT)
