#!/usr/bin/env bash
# test_hf_accelerate's checks for the other kinds of Hugging Face model:
# BERT (masked LM: encoder only, token-type embeddings, a head tied to the
# word embeddings), T5 (encoder-decoder: relative position biases, cross
# attention, the decoder's inputs shifted from the labels) and ViT (image
# classifier: a patch convolution, a class token), each under Accelerate's
# DDP.
HF_MODELS="bert t5 vit" exec "$MAYA_TOP/tests/frameworks/test_hf_accelerate.sh"
