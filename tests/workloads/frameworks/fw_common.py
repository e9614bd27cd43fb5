"""What the framework workloads share: a Hugging Face model built from a
config (random weights, nothing downloaded), random batches, and the
one MAYA_RESULT line each script prints for its test to read."""
import json
import sys

import torch


HF_MODELS = ("gpt2", "llama", "bert", "t5", "vit")


def hf_model(model, layers=2, dim=128, seq=64, vocab=1024):
    """A Hugging Face model of the given size, from its config: GPT-2 or
    Llama (causal LM), BERT (masked LM), T5 (encoder-decoder LM) or ViT
    (image classifier over seq patches of 4x4 pixels, 10 classes)."""
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
    if model == "bert":
        cfg = transformers.BertConfig(vocab_size=vocab, hidden_size=dim, num_hidden_layers=layers,
                                      num_attention_heads=heads, intermediate_size=4 * dim, max_position_embeddings=seq)
        return transformers.BertForMaskedLM(cfg)
    if model == "t5":
        cfg = transformers.T5Config(vocab_size=vocab, d_model=dim, d_kv=dim // heads, d_ff=4 * dim, num_layers=layers,
                                    num_decoder_layers=layers, num_heads=heads, pad_token_id=0,
                                    decoder_start_token_id=0, eos_token_id=1)
        return transformers.T5ForConditionalGeneration(cfg)
    if model == "vit":
        side = int(seq ** 0.5)
        cfg = transformers.ViTConfig(image_size=4 * side, patch_size=4, hidden_size=dim, num_hidden_layers=layers,
                                     num_attention_heads=heads, intermediate_size=4 * dim, num_labels=10)
        return transformers.ViTForImageClassification(cfg)
    sys.exit(f"model must be one of {', '.join(HF_MODELS)}, not {model!r}")


def hf_batches(model, vocab, batch, seq, seed, device):
    """A function giving the next batch of random inputs for hf_model's model,
    as the keyword arguments of its forward (labels included, so that it
    returns a loss)."""
    g = torch.Generator().manual_seed(seed)
    if model == "vit":
        side = int(seq ** 0.5)
        return lambda: dict(pixel_values=torch.randn(batch, 3, 4 * side, 4 * side, generator=g).to(device),
                            labels=torch.randint(0, 10, (batch,), generator=g).to(device))
    tokens = token_batches(vocab, batch, seq, seed, device)
    if model == "t5":
        return lambda: dict(input_ids=tokens(), labels=tokens())

    def lm_batch():
        ids = tokens()
        return dict(input_ids=ids, labels=ids)
    return lm_batch


def add_lm_args(ap):
    """The size options of the hf_model workloads, on an argparse parser."""
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


def float_buffer_bytes(model):
    """The bytes of the model's floating-point buffers (BatchNorm's running
    statistics, Llama's rotary frequencies): DDP broadcasts them with the
    parameters at the start, in buckets by type, and again before each
    forward (broadcast_buffers); other buffers (step counters, BERT's
    position ids) go apart."""
    return sum(b.numel() * b.element_size() for b in model.buffers() if b.is_floating_point())


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
