"""A Hugging Face Transformers model (GPT-2, Llama, BERT, T5 or ViT, built
from a config with random weights: nothing is downloaded) trained with
Accelerate's DDP.

An ordinary Accelerate program: on real GPUs run it with `accelerate launch`
or torchrun; under maya, `maya run -g h100xN -- python hf_accelerate.py ...`.

  hf_accelerate.py gpt2|llama|bert|t5|vit STEPS [--layers N] [--dim D] [--seq S] [--batch B]
"""
import argparse

import accelerate
import torch
import transformers
from accelerate import Accelerator

import fw_common


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model", choices=fw_common.HF_MODELS)
    ap.add_argument("steps", type=int)
    fw_common.add_lm_args(ap)
    a = ap.parse_args()

    acc = Accelerator()
    torch.manual_seed(0)
    model = fw_common.hf_model(a.model, a.layers, a.dim, a.seq, a.vocab)
    nparams, pbytes, bbytes = fw_common.param_sizes(model)
    fbytes = fw_common.float_buffer_bytes(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    model, opt = acc.prepare(model, opt)
    batch = fw_common.hf_batches(a.model, a.vocab, a.batch, a.seq, acc.process_index, acc.device)
    for _ in range(a.steps):
        out = model(**batch())
        acc.backward(out.loss)
        opt.step()
        opt.zero_grad()
    acc.wait_for_everyone()
    fw_common.result(f"hf_{a.model}_accelerate", rank=acc.process_index, world_size=acc.num_processes,
                     steps=a.steps, params=nparams, param_bytes=pbytes, buffer_bytes=bbytes, float_buffer_bytes=fbytes, wrapper=type(model).__name__,
                     transformers=transformers.__version__, accelerate=accelerate.__version__)
    acc.end_training()


if __name__ == "__main__":
    main()
