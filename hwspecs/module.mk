# hwspecs/: GPU and cluster descriptions, copied into build/share/maya/hwspecs.
HWSPEC_FILES := $(wildcard hwspecs/gpus/*.conf hwspecs/clusters/*.conf)
HWSPEC_OUT   := $(HWSPEC_FILES:hwspecs/%=$(B)/share/maya/hwspecs/%)

$(B)/share/maya/hwspecs/%: hwspecs/%
	@mkdir -p $(@D)
	cp $< $@

ALL_TARGETS += $(HWSPEC_OUT)
