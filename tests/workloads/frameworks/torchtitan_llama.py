"""torchtitan's own trainer (torchtitan.train.main, as `torchrun -m
torchtitan.train` runs it) on its Llama 3 debug model, with the parallelism
and compile options given on the command line, e.g.

    torchtitan_llama.py ASSETS --parallelism.tensor_parallel_degree 2 --compile.enable

Nothing is downloaded: before the trainer starts, rank 0 writes into ASSETS
a byte-level BPE tokenizer trained on a few generated sentences (what
torchtitan's tests/assets/tokenizer is, smaller) and a JSON-lines text
dataset in the layout of its c4_test set, which the "c4_test" dataset then
loads from that path with Hugging Face datasets' json builder. The other
ranks wait for rank 0's marker file (no collective: the process group is
the trainer's to create)."""
import json
import os
import sys
import time

# The debug model's vocabulary (torchtitan.models.llama3 "debugmodel").
VOCAB = 2048


def sentences(n):
    """n sentences of generated words (deterministic)."""
    words = ["model", "token", "layer", "shard", "tensor", "pipeline", "stage", "batch", "gradient",
             "optimizer", "memory", "kernel", "stream", "device", "rank", "step", "loss", "weight"]
    return [" ".join(words[(i * 7 + j * 3) % len(words)] for j in range(8 + i % 5)) + "." for i in range(n)]


def write_assets(path):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    os.makedirs(os.path.join(path, "tokenizer"), exist_ok=True)
    os.makedirs(os.path.join(path, "c4_test"), exist_ok=True)
    text = sentences(2000)
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(text, trainers.BpeTrainer(vocab_size=VOCAB, special_tokens=["<|begin_of_text|>",
                                                                                         "<|end_of_text|>"]))
    tok.save(os.path.join(path, "tokenizer", "tokenizer.json"))
    with open(os.path.join(path, "tokenizer", "tokenizer_config.json"), "w") as f:
        json.dump({"bos_token": "<|begin_of_text|>", "eos_token": "<|end_of_text|>",
                   "add_bos_token": True, "add_eos_token": True}, f)
    with open(os.path.join(path, "c4_test", "c4-train.00000-of-00001.json"), "w") as f:
        for i in range(0, len(text), 20):
            f.write(json.dumps({"text": " ".join(text[i:i + 20])}) + "\n")
    open(os.path.join(path, "ready"), "w").close()


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: torchtitan_llama.py ASSETS_DIR [torchtitan options...]")
    assets = sys.argv[1]
    if int(os.environ.get("RANK", "0")) == 0:
        write_assets(assets)
    else:
        deadline = time.time() + 300
        while not os.path.exists(os.path.join(assets, "ready")):
            if time.time() > deadline:
                sys.exit(f"rank {os.environ.get('RANK')}: rank 0 wrote no {assets}/ready in 300 s")
            time.sleep(0.2)
    sys.argv = [sys.argv[0], "--module", "llama3", "--config", "llama3_debugmodel",
                "--hf_assets_path", os.path.join(assets, "tokenizer"),
                "--dataloader.dataset_path", os.path.join(assets, "c4_test"),
                "--dump_folder", os.path.join(assets, "outputs")] + sys.argv[2:]
    from torchtitan.train import main as torchtitan_main
    torchtitan_main()


if __name__ == "__main__":
    main()
