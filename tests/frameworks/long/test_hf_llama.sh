#!/usr/bin/env bash
# (make test-frameworks-long) test_hf_accelerate's checks for a Hugging Face
# Llama (grouped-query attention, rotary buffers broadcast with the
# parameters, SwiGLU MLP) under Accelerate's DDP.
HF_MODELS=llama exec "$MAYA_TOP/tests/frameworks/test_hf_accelerate.sh"
