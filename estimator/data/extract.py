#!/usr/bin/env python3
"""Regenerate the estimator's training tables (estimator/data/*.csv) from the
measured data in the shared data folder (default: ../shared/data relative to
the repository root). Standard library only. See SOURCE.md beside this file.

    python3 estimator/data/extract.py [SHARED_DATA_DIR]

Every table has a `group` column: rows of one group share a model shape
(a transformer architecture, a GEMM shape, a message size) and are held out
together when accuracy is measured.
"""
import csv
import glob
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))

# vidur device names -> hwspec keys. vidur's compute "a100" is the A100 80GB
# and "h100" the H100 (SXM form factor assumed: the shared data does not say).
VIDUR_GPU = {"a100": "A100-SXM4-80GB", "h100": "H100-SXM", "a40": "A40"}


def med_us(row, op):
    v = row.get("time_stats.%s.median" % op, "")
    if v in ("", "nan"):
        return None
    return float(v) * 1000.0  # ms -> us


def arch_group(r):
    """Models with the same layer shapes are one group (Llama-2-70B and
    Llama-3-70B differ only in vocabulary)."""
    return "e%s-h%s-kv%s-f%s-g%s" % (r["n_embd"], r["n_head"], r["n_kv_head"],
                                     r["n_expanded_embd"], r["use_gated_mlp"])


def vidur_compute(data):
    gemm, kern = [], []
    for path in sorted(glob.glob(os.path.join(data, "vidur-profiling/compute/*/*/*/mlp.csv"))):
        sku = path.split(os.sep)[-4]
        gpu = VIDUR_GPU[sku]
        with open(path) as f:
            for r in csv.DictReader(f):
                T = int(r["num_tokens"])
                # Thin the token sweep (steps of 8 up to 32768) to a third to
                # keep the tables small, keeping every alignment mod 128.
                if T > 64 and (T // 8) % 3:
                    continue
                tp = int(r["num_tensor_parallel_workers"])
                E = int(r["n_embd"])
                H = int(r["n_head"])
                KV = int(r["n_kv_head"])
                F = int(r["n_expanded_embd"])
                gated = r["use_gated_mlp"] == "True"
                hd = E // H
                grp = arch_group(r)
                # [T x k] x [k x n], fp16 (vidur SOURCE.md). Gated MLPs fuse
                # gate and up projections into one GEMM (up ~ 2x down in the data).
                shapes = {
                    "attn_pre_proj": (T, (H + 2 * KV) * hd // tp, E),
                    "attn_post_proj": (T, E, H * hd // tp),
                    "mlp_up_proj": (T, F * (2 if gated else 1) // tp, E),
                    "mlp_down_proj": (T, E, F // tp),
                }
                for op, (m, n, k) in shapes.items():
                    t = med_us(r, op)
                    if t and t > 0:
                        gemm.append([gpu, "vidur", grp, m, n, k, "fp16", t])
                # Memory-bound kernels: bytes read + written, fp16.
                act_in = F * (2 if gated else 1) // tp
                kbytes = {
                    "input_layernorm": 2 * T * E * 2 + E * 2,
                    "post_attention_layernorm": 2 * T * E * 2 + E * 2,
                    "add": 3 * T * E * 2,
                    "mlp_act": (T * act_in + T * (F // tp)) * 2,
                    "attn_rope": 2 * T * (H + KV) * hd // tp * 2,
                }
                # named after the vLLM kernels that ran them (the estimator
                # classifies kernels by name: norm, add, act, rotary)
                kname = {
                    "input_layernorm": "rms_norm" if gated else "layer_norm",
                    "post_attention_layernorm": "rms_norm" if gated else "layer_norm",
                    "add": "add",
                    "mlp_act": "silu_and_mul" if gated else "gelu_new",
                    "attn_rope": "rotary_embedding",
                }
                for op, b in kbytes.items():
                    t = med_us(r, op)
                    if t and t > 0:
                        kern.append([gpu, "vidur", grp, kname[op], b, t])
    return dedup(gemm), dedup(kern)


def dedup(rows):
    """One row per distinct op in a group (TP degrees and models of one
    architecture repeat shapes): the median of the measured times."""
    by = {}
    for r in rows:
        by.setdefault(tuple(r[:-1]), []).append(r[-1])
    out = []
    for key, ts in by.items():
        ts.sort()
        mid = len(ts) // 2
        t = ts[mid] if len(ts) % 2 else 0.5 * (ts[mid - 1] + ts[mid])
        out.append(list(key) + ["%.4g" % t])
    return out


def xla_gemm(data):
    rows = []
    with open(os.path.join(data, "reference/xla_matmul_sm90_b1.csv")) as f:
        lines = [l for l in f if not l.startswith("#")]
    for r in csv.DictReader(lines):
        m, n, k = int(r["m"]), int(r["n"]), int(r["k"])
        for col, prec in (("bf16_TFLOPs", "bf16"), ("f32_TFLOPs", "tf32")):
            tf = float(r[col])
            if tf <= 0:
                continue
            t_us = 2.0 * m * n * k / (tf * 1e12) * 1e6
            rows.append(["H100-SXM", "xla-sm90", "mnk%dx%dx%d" % (m, n, k), m, n, k, prec, "%.3f" % t_us])
    return rows


def vidur_network(data, coll):
    """all_reduce / send_recv: one row per (workers, devices per node, size)."""
    rows = []
    for path in sorted(glob.glob(os.path.join(data, "vidur-profiling/network/*/%s.csv" % coll))):
        node = path.split(os.sep)[-2]
        sku, kind = node.split("_", 1)
        gpu = VIDUR_GPU[sku]
        setup = "dgx" if kind == "dgx" else "pairwise"
        with open(path) as f:
            for r in csv.DictReader(f):
                n = int(r["num_workers"])
                dpn = int(r["devices_per_node"])
                if setup == "pairwise" and dpn < n:
                    continue  # the network between pairwise VMs is not described
                t = med_us(r, coll)
                if not t or t <= 0:
                    continue
                nodes = (n + dpn - 1) // dpn
                size = int(r["size"])
                # vidur's a100_dgx between nodes moves ~7.8 GB/s per GPU (send/recv
                # and all-reduce alike): a third of its HDR NICs, what one 100 Gb/s
                # link per GPU gives. Described as such, so that these rows do not
                # contradict the 20.8 GB/s of p2p_inter_node (full HDR).
                st = "dgx-100g" if nodes > 1 and sku == "a100" and setup == "dgx" else setup
                rows.append([gpu, "vidur:" + node, st, "b%d" % size, n, nodes, min(dpn, n), size, "%.3f" % t])
    return rows


HIST = "vidur-profiling/history"


def vidur_attention(data):
    """Flash-attention prefill (causal, chunked: the chunk attends to the KV
    cache and to itself) and paged decode on A100, Llama-2-70B shapes at TP2
    (64 query / 8 KV heads -> 32 / 4 per GPU, head dim 128), fp16."""
    rows = []
    for path in sorted(glob.glob(os.path.join(data, HIST, "*/a100/attention.csv"))):
        with open(path) as f:
            for r in csv.DictReader(f):
                tp = int(r["num_tensor_parallel_workers"])
                h = int(r["n_q_head"]) // tp
                kvh = max(1, int(r["n_kv_head"]) // tp)
                hd = int(r["n_embd"]) // int(r["n_q_head"])
                kv = int(r["kv_cache_size"])
                if r["is_prefill"] == "True":
                    chunk = int(r["prefill_chunk_size"])
                    t = med_us(r, "attn_prefill")
                    if chunk < 1 or not t:
                        continue
                    rows.append(["A100-SXM4-80GB", "vidur", "p%d" % chunk, 1, h, kvh, chunk, chunk + kv, hd, 1, t])
                else:
                    b = int(r["batch_size"])
                    t = med_us(r, "attn_decode")
                    if b < 1 or kv < 1 or not t:
                        continue
                    rows.append(["A100-SXM4-80GB", "vidur", "d%d" % kv, b, h, kvh, 1, kv, hd, 0, t])
    return dedup(rows)


def vidur_p2p_inter_node(data):
    """Pipeline-parallel activations sent between two DGX A100 nodes: a
    message is n_embd * tokens fp16 elements split over the TP ranks
    (consistent with ~20.8 GB/s, one HDR NIC, at every TP degree)."""
    rows = []
    for path in sorted(glob.glob(os.path.join(data, HIST, "*/a100/p2p_inter_node.csv"))):
        with open(path) as f:
            for r in csv.DictReader(f):
                T = int(r["num_tokens"])
                if T < 1 or (T > 64 and (T // 8) % 3):
                    continue
                size = int(r["n_embd"]) * T * 2 // int(r["num_tensor_parallel_workers"])
                t = med_us(r, "send_recv")
                if t:
                    rows.append(["A100-SXM4-80GB", "vidur:p2p_inter_node", "dgx", "b%d" % size, 2, 2, 1, size, t])
    return dedup(rows)


def write(name, header, rows):
    path = os.path.join(HERE, name)
    tmp = path + ".tmp"
    with open(tmp, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)
    os.replace(tmp, path)
    print("%s: %d rows" % (name, len(rows)))


def main():
    if len(sys.argv) > 1:
        data = sys.argv[1]
    else:  # beside the checkout (CI), or beside its parent (a worktree under wt/)
        cands = [os.path.join(TOP, "..", "shared", "data"), os.path.join(TOP, "..", "..", "shared", "data")]
        data = next((c for c in cands if os.path.isdir(c)), cands[0])
    if not os.path.isdir(os.path.join(data, "vidur-profiling")):
        sys.exit("extract.py: %s has no vidur-profiling/; give the shared data folder" % data)
    gemm, kern = vidur_compute(data)
    gemm += xla_gemm(data)
    write("gemm.csv", ["gpu", "source", "group", "m", "n", "k", "prec", "time_us"], gemm)
    write("kernel.csv", ["gpu", "source", "group", "op", "bytes", "time_us"], kern)
    hdr = ["gpu", "source", "setup", "group", "ranks", "nodes", "ranks_per_node", "bytes", "time_us"]
    # nccl-tests curves are not training data: fidelity/collectives.sh judges the model on them
    write("allreduce.csv", hdr, vidur_network(data, "all_reduce"))
    write("sendrecv.csv", hdr, vidur_network(data, "send_recv") + vidur_p2p_inter_node(data))
    write("attention.csv", ["gpu", "source", "group", "batch", "heads", "kv_heads", "seq_q", "seq_kv",
                            "head_dim", "causal", "time_us"], vidur_attention(data))


if __name__ == "__main__":
    main()
