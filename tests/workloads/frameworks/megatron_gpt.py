"""A Megatron-core GPT (local layer spec: no Transformer Engine or apex)
trained with tensor and pipeline parallelism through Megatron-core's own
DistributedDataParallel, get_megatron_optimizer and pipeline schedules, the
way Megatron-LM's pretrain_gpt.py drives them.

An ordinary Megatron-core program: it reads the torchrun environment, which
both torchrun and `maya run` give it. With --sp (sequence parallelism) its
layer spec normalises with SPLayerNorm below: Megatron-core's own torch
LayerNorm refuses sequence parallelism, and its fused ones need Transformer
Engine or apex.

  megatron_gpt.py STEPS [--tp N] [--pp N] [--vpp N] [--sp] [--dist-opt]
                  [--recompute full|selective] [--layers N] [--dim D]
"""
import argparse
import os
from functools import partial

import torch
import megatron.core
from megatron.core import parallel_state
from megatron.core.distributed import DistributedDataParallel, DistributedDataParallelConfig
from megatron.core.models.gpt.gpt_layer_specs import get_gpt_layer_local_spec
from megatron.core.models.gpt.gpt_model import GPTModel
from megatron.core.optimizer import OptimizerConfig, get_megatron_optimizer
from megatron.core.pipeline_parallel.schedules import get_forward_backward_func
from megatron.core.tensor_parallel.random import model_parallel_cuda_manual_seed
from megatron.core.transformer.module import Float16Module
from megatron.core.transformer.transformer_block import TransformerBlockSubmodules, get_num_layers_to_build
from megatron.core.transformer.transformer_config import TransformerConfig

import fw_common


class SPLayerNorm(torch.nn.LayerNorm):
    """torch's LayerNorm, made as Megatron-core makes its norms, that marks its
    weights sequence-parallel as Megatron-core's FusedLayerNorm does: under
    sequence parallelism each tensor-parallel rank normalises its share of
    the sequence, and Megatron-core all-reduces these weights' gradients
    over the tensor-parallel group (finalize_model_grads)."""

    def __init__(self, config, hidden_size, eps=1e-5, **kwargs):
        super().__init__(hidden_size, eps=eps)
        for p in (self.weight, self.bias):
            setattr(p, "sequence_parallel", config.sequence_parallel)


def layer_spec(cfg, vp):
    """The local spec; with sequence parallelism, its norms SPLayerNorm."""
    spec = get_gpt_layer_local_spec()
    if not cfg.sequence_parallel:
        return spec
    spec.submodules.input_layernorm = SPLayerNorm
    spec.submodules.pre_mlp_layernorm = SPLayerNorm
    return TransformerBlockSubmodules(layer_specs=[spec] * get_num_layers_to_build(cfg, vp_stage=vp),
                                      layer_norm=SPLayerNorm)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("steps", type=int)
    ap.add_argument("--tp", type=int, default=2)
    ap.add_argument("--pp", type=int, default=1)
    ap.add_argument("--vpp", type=int, default=None)
    ap.add_argument("--sp", action="store_true")
    ap.add_argument("--dist-opt", action="store_true")
    ap.add_argument("--recompute", choices=["full", "selective"])
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--seq", type=int, default=64)
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--microbatches", type=int, default=2)
    ap.add_argument("--vocab", type=int, default=1024)
    a = ap.parse_args()

    local = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local)
    torch.distributed.init_process_group("nccl")
    parallel_state.initialize_model_parallel(tensor_model_parallel_size=a.tp, pipeline_model_parallel_size=a.pp,
                                             virtual_pipeline_model_parallel_size=a.vpp)
    model_parallel_cuda_manual_seed(0)
    recompute = {}
    if a.recompute == "full":
        recompute = dict(recompute_granularity="full", recompute_method="uniform", recompute_num_layers=1)
    elif a.recompute == "selective":
        recompute = dict(recompute_granularity="selective")
    cfg = TransformerConfig(num_layers=a.layers, hidden_size=a.dim, num_attention_heads=max(1, a.dim // 32),
                            use_cpu_initialization=True, bf16=True, params_dtype=torch.bfloat16,
                            pipeline_dtype=torch.bfloat16, tensor_model_parallel_size=a.tp,
                            pipeline_model_parallel_size=a.pp, virtual_pipeline_model_parallel_size=a.vpp,
                            sequence_parallel=a.sp, **recompute)

    def chunk(vp):
        first = parallel_state.is_pipeline_first_stage(ignore_virtual=False, vp_stage=vp)
        last = parallel_state.is_pipeline_last_stage(ignore_virtual=False, vp_stage=vp)
        return GPTModel(config=cfg, transformer_layer_spec=layer_spec(cfg, vp), vocab_size=a.vocab,
                        max_sequence_length=a.seq, pre_process=first, post_process=last, vp_stage=vp)

    ddp_cfg = DistributedDataParallelConfig(use_distributed_optimizer=a.dist_opt)
    chunks = [chunk(vp) for vp in (range(a.vpp) if a.vpp else [None])]
    # bf16 as Megatron-LM runs it: each chunk in a Float16Module (bf16 weights,
    # fp32 main copies in the optimizer), then Megatron-core's DDP.
    model = [DistributedDataParallel(config=cfg, ddp_config=ddp_cfg, module=Float16Module(cfg, m.cuda()))
             for m in chunks]
    nparams = sum(p.numel() for m in model for p in m.parameters())
    pbytes = sum(p.numel() * p.element_size() for m in model for p in m.parameters())
    # clip_grad=0: gradient clipping scales by a norm that kernels compute,
    # which maya does not (docs/compatibility.md); Megatron's own switch.
    opt = get_megatron_optimizer(OptimizerConfig(optimizer="adam", lr=1e-4, bf16=True, clip_grad=0.0,
                                                 use_distributed_optimizer=a.dist_opt), model)

    g = torch.Generator().manual_seed(parallel_state.get_data_parallel_rank())

    def batches():
        while True:
            ids = torch.randint(0, a.vocab, (a.batch, a.seq), generator=g)
            yield ids.cuda(), torch.arange(a.seq).expand(a.batch, a.seq).cuda()

    def loss_func(loss_mask, out):
        return (out * loss_mask).sum() / loss_mask.sum(), {}

    def forward_step(data, m):
        ids, pos = next(data)
        out = m(ids, pos, None, labels=ids)
        return out, partial(loss_func, torch.ones(a.batch, a.seq, device="cuda"))

    fwd_bwd = get_forward_backward_func()
    data = [batches() for _ in model]
    for _ in range(a.steps):
        for m in model:
            m.zero_grad_buffer()
        opt.zero_grad()
        fwd_bwd(forward_step_func=forward_step, data_iterator=data if len(model) > 1 else data[0],
                model=model if len(model) > 1 else model[0], num_microbatches=a.microbatches, seq_length=a.seq,
                micro_batch_size=a.batch, forward_only=False)
        opt.step()
    fw_common.result("megatron_gpt", rank=torch.distributed.get_rank(), world_size=torch.distributed.get_world_size(),
                     steps=a.steps, params=nparams, param_bytes=pbytes, layers=a.layers, dim=a.dim, seq=a.seq, batch=a.batch,
                     microbatches=a.microbatches, tp=a.tp, pp=a.pp, vpp=a.vpp,
                     tp_rank=parallel_state.get_tensor_model_parallel_rank(),
                     pp_rank=parallel_state.get_pipeline_model_parallel_rank(),
                     optimizer=type(opt).__name__, megatron_core=megatron.core.__version__)
    parallel_state.destroy_model_parallel()
    torch.distributed.destroy_process_group()


if __name__ == "__main__":
    main()
