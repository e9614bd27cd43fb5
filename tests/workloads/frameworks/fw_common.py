"""What the framework workloads share: a Hugging Face causal LM built from a
config (random weights, nothing downloaded), random token batches, and the
one MAYA_RESULT line each script prints for its test to read."""
import json
import sys

import torch


def hf_lm(model, layers=2, dim=128, seq=64, vocab=1024):
    """GPT-2 or Llama of the given size, from its config."""
    import transformers
    heads = max(1, dim // 64)
    if model == "gpt2":
        cfg = transformers.GPT2Config(vocab_size=vocab, n_positions=seq, n_embd=dim, n_layer=layers, n_head=heads,
                                      bos_token_id=0, eos_token_id=0)
        return transformers.GPT2LMHeadModel(cfg)
    if model == "llama":
        cfg = transformers.LlamaConfig(vocab_size=vocab, hidden_size=dim, intermediate_size=4 * dim,
                                       num_hidden_layers=layers, num_attention_heads=heads,
                                       num_key_value_heads=max(1, heads // 2), max_position_embeddings=seq,
                                       bos_token_id=0, eos_token_id=0)
        return transformers.LlamaForCausalLM(cfg)
    sys.exit(f"model must be gpt2 or llama, not {model!r}")


def add_lm_args(ap):
    """The size options of the hf_lm workloads, on an argparse parser."""
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--seq", type=int, default=64)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--vocab", type=int, default=1024)


def param_sizes(model):
    """(number of parameters, their bytes, the buffers' bytes), each shared
    tensor once."""
    ps = list(model.parameters())
    return (sum(p.numel() for p in ps), sum(p.numel() * p.element_size() for p in ps),
            sum(b.numel() * b.element_size() for b in model.buffers()))


def token_batches(vocab, batch, seq, seed, device):
    g = torch.Generator().manual_seed(seed)
    return lambda: torch.randint(0, vocab, (batch, seq), generator=g).to(device)


def result(workload, **fields):
    """Print the result line the tests read: MAYA_RESULT {json}. Under maya
    losses are not computed (kernels are recorded, not run), so none is
    printed or checked."""
    res = dict(workload=workload, torch=torch.__version__,
               max_memory_allocated=torch.cuda.max_memory_allocated(), **fields)
    print("MAYA_RESULT " + json.dumps(res), flush=True)
