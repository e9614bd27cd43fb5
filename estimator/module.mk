# estimator/: op durations (analytical, learned, oracle) as libmaya-estimator.a.
EST_SRCS := $(wildcard estimator/*.c)
EST_OBJS := $(EST_SRCS:%.c=$(B)/obj/%.o)
EST_LIB  := $(B)/obj/libmaya-estimator.a
EST_LDLIBS := -lxgboost -lm -lz

$(EST_OBJS): EXTRA_CFLAGS := -I$(CUDA_HOME)/include

$(EST_LIB): $(EST_OBJS)
	@mkdir -p $(@D)
	$(AR) rcs $@ $^

# The estimator reads profiles (traces) with the collator's reader.
CLI_LIBS += $(EST_LIB)
CLI_LDLIBS += $(EST_LDLIBS)

# Unit tests of the estimator (tests/run runs build/tests/unit/test_*).
EST_UNIT := $(B)/tests/unit/test_estimator
$(B)/obj/tests/estimator/unit_estimator.o: EXTRA_CFLAGS := -I$(CUDA_HOME)/include
$(EST_UNIT): $(B)/obj/tests/estimator/unit_estimator.o $(EST_LIB) $(COLLATOR_LIB) $(COMMON_LIB)
	@mkdir -p $(@D)
	$(CC) -o $@ $^ $(LDFLAGS) $(COMMON_LIBS) $(EST_LDLIBS)
ALL_TARGETS += $(EST_UNIT)

# The training tool and the trained models. Models are fitted on the tables
# committed in estimator/data/ (regenerated from the shared data by
# estimator/data/extract.py), so a clean clone builds them without it.
EST_TRAIN := $(B)/bin/maya-est-train
EST_DATA  := $(wildcard estimator/data/*.csv)
EST_MODELS_DIR   := $(B)/share/maya/models
EST_MODELS_STAMP := $(B)/obj/estimator/models.stamp
$(B)/obj/estimator/train/maya_est_train.o: EXTRA_CFLAGS := -I$(CUDA_HOME)/include
$(EST_TRAIN): $(B)/obj/estimator/train/maya_est_train.o $(EST_LIB) $(COLLATOR_LIB) $(COMMON_LIB)
	@mkdir -p $(@D)
	$(CC) -o $@ $^ $(LDFLAGS) $(COMMON_LIBS) $(EST_LDLIBS)

$(EST_MODELS_STAMP): $(EST_TRAIN) $(EST_DATA) $(HWSPEC_FILES)
	@mkdir -p $(@D) $(EST_MODELS_DIR)
	@rm -f $(EST_MODELS_DIR)/*.json # a model whose data went away must not linger
	$(EST_TRAIN) --data estimator/data --hwspecs hwspecs --out $(EST_MODELS_DIR) > $(@D)/train.log
	@touch $@

ALL_TARGETS += $(EST_TRAIN) $(EST_MODELS_STAMP)

# Held-out accuracy of every model (see the header it prints), then the
# analytical convolutions against DeepBench's V100 ones (fitted on none).
accuracy: $(EST_TRAIN) all
	$(EST_TRAIN) --data estimator/data --hwspecs hwspecs --accuracy
	python3 estimator/data/conv_check.py $(MAYA_BIN)

# Speed of est_estimate (make bench runs build/bench/*).
EST_BENCH := $(B)/bench/est_bench
$(B)/obj/bench/est_bench.o: EXTRA_CFLAGS := -I$(CUDA_HOME)/include
$(EST_BENCH): $(B)/obj/bench/est_bench.o $(EST_LIB) $(COLLATOR_LIB) $(COMMON_LIB)
	@mkdir -p $(@D)
	$(CC) -o $@ $^ $(LDFLAGS) $(COMMON_LIBS) $(EST_LDLIBS)
ALL_TARGETS += $(EST_BENCH)
