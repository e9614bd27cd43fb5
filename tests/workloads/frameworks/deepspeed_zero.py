"""A Hugging Face GPT-2 (from a config, random weights) trained with DeepSpeed
ZeRO at a given stage, optionally with the optimizer offloaded to the CPU and
the activations checkpointed to the CPU.

An ordinary DeepSpeed program: it reads the torchrun environment (RANK,
WORLD_SIZE, LOCAL_RANK, MASTER_ADDR/PORT), which both `deepspeed`/torchrun
and `maya run` give it.

  deepspeed_zero.py STAGE STEPS [--offload] [--activation-offload] [--fused-adam] [--layers N] [--dim D]

Without --fused-adam the optimizer is torch's AdamW ("torch_adam"), so that
no CUDA extension has to be JIT-built; with it, DeepSpeed builds its
FusedAdam with nvcc and ninja on first use (cached in TORCH_EXTENSIONS_DIR).
With --activation-offload each transformer block is recomputed in the
backward pass from its input, which DeepSpeed's activation checkpointing
keeps in host memory between the passes (partition_activations and
cpu_checkpointing, as its configuration names them).
"""
import argparse
import os

import deepspeed
import torch

import fw_common


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("stage", type=int, choices=[1, 2, 3])
    ap.add_argument("steps", type=int)
    ap.add_argument("--offload", action="store_true")
    ap.add_argument("--activation-offload", action="store_true")
    ap.add_argument("--fused-adam", action="store_true")
    fw_common.add_lm_args(ap)
    a = ap.parse_args()

    local = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local)
    deepspeed.init_distributed(dist_backend="nccl")
    torch.manual_seed(0)
    model = fw_common.hf_model("gpt2", a.layers, a.dim, a.seq, a.vocab)
    nparams, pbytes, _ = fw_common.param_sizes(model)
    # Buckets sized for a small model (DeepSpeed's defaults, 5e8 elements,
    # would reserve a GiB for a model of a few MB): the tests bound the peak
    # memory by the model's size.
    zero = {"stage": a.stage, "reduce_bucket_size": 500000, "allgather_bucket_size": 500000,
            "stage3_prefetch_bucket_size": 500000, "stage3_param_persistence_threshold": 0}
    if a.offload:
        zero["offload_optimizer"] = {"device": "cpu"}
    cfg = {
        "train_micro_batch_size_per_gpu": a.batch,
        "gradient_accumulation_steps": 1,
        "optimizer": {"type": "AdamW", "params": {"lr": 1e-4, "torch_adam": not a.fused_adam}},
        "bf16": {"enabled": True},
        "zero_optimization": zero,
        "steps_per_print": 1000000,
    }
    if a.activation_offload:
        cfg["activation_checkpointing"] = {"partition_activations": True, "cpu_checkpointing": True}
        deepspeed.checkpointing.configure(None, deepspeed_config=cfg)

        # Hugging Face calls the function with the block's input and its
        # other arguments (None where unused); DeepSpeed's checkpoint keeps
        # the input, the rest goes with the block.
        def ds_checkpoint(block, hidden, *rest):
            return deepspeed.checkpointing.checkpoint(lambda h: block(h, *rest), hidden)
        model._set_gradient_checkpointing(enable=True, gradient_checkpointing_func=ds_checkpoint)
    engine, _, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=cfg)
    batch = fw_common.token_batches(a.vocab, a.batch, a.seq, engine.global_rank, engine.device)
    for step in range(a.steps):
        # A range per step, as one marks steps for a profiler: the test names
        # it as maya's iteration marker.
        torch.cuda.nvtx.range_push(f"step {step}")
        ids = batch()
        loss = engine(input_ids=ids, labels=ids).loss
        engine.backward(loss)
        engine.step()
        torch.cuda.nvtx.range_pop()
    fw_common.result(f"deepspeed_zero{a.stage}", rank=engine.global_rank, world_size=engine.world_size,
                     steps=a.steps, params=nparams, param_bytes=pbytes, stage=engine.zero_optimization_stage(),
                     optimizer=type(engine.optimizer).__name__, deepspeed=deepspeed.__version__)
    torch.distributed.destroy_process_group()


if __name__ == "__main__":
    main()
