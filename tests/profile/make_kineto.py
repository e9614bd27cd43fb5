#!/usr/bin/env python3
"""Write PyTorch profiler (Kineto) traces, one per rank, of what a GPU run of
a program would have measured, from maya's timeline.json of the same program:
the Chrome-trace JSON torch.profiler's export_chrome_trace writes, with its
structure (schemaVersion, deviceProperties, distributedInfo, traceEvents of
cpu_op, cuda_runtime, kernel, gpu_memcpy and gpu_memset complete events with
their args, ac2g flow events, process metadata) and its names: cuBLAS GEMMs as
sm90_xmma_gemm_... kernels, NCCL collectives as ncclDevKernel_... kernels,
copies as "Memcpy HtoD (Pageable -> Device)". The measured durations are
maya's times x a factor: GEMMs --gemm-factor, rank --slow-rank --slow-factor
on top (a straggler), so that the comparison has known answers. --split-k
writes each GEMM as cuBLAS's split-K GEMMs run: a GEMM kernel (80 % of the
time) and its cublasLt::splitKreduce_kernel (20 %) on the same stream.

usage: make_kineto.py TIMELINE OUTDIR [--gemm-factor F] [--slow-rank R --slow-factor F] [--split-k]
"""
import argparse
import json
import os

GEMM = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas"
SPLITK = ("void cublasLt::splitKreduce_kernel<32, 16, int, float, __nv_bfloat16, float, __nv_bfloat16, true, false, "
          "false>(cublasLt::cublasSplitKParams<float>, __nv_bfloat16 const*, __nv_bfloat16 const*, __nv_bfloat16*, "
          "float const*, float const*, __nv_bfloat16 const*, float const*, __nv_bfloat16*, void*, long, float*, int*)")
NCCL = {"ncclAllReduce": "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
        "ncclAllGather": "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
        "ncclReduceScatter": "ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
        "ncclBroadcast": "ncclDevKernel_Broadcast_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
        "ncclSend": "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)",
        "ncclRecv": "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("timeline")
    ap.add_argument("out")
    ap.add_argument("--gemm-factor", type=float, default=1.0)
    ap.add_argument("--slow-rank", type=int, default=-1)
    ap.add_argument("--slow-factor", type=float, default=1.0)
    ap.add_argument("--split-k", action="store_true")
    a = ap.parse_args()
    t = json.load(open(a.timeline))
    ranks = sorted({e["pid"] for e in t["traceEvents"] if e["ph"] == "X"})
    os.makedirs(a.out, exist_ok=True)
    for r in ranks:
        dev = sorted((e for e in t["traceEvents"] if e["ph"] == "X" and e["pid"] == r and e["tid"] > 0),
                     key=lambda e: e["ts"])
        ev = [{"ph": "M", "name": "process_name", "pid": r, "tid": 0, "args": {"name": f"python3 {1000 + r}"}},
              {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1000 + r, "tid": 1000 + r,
               "ts": 0, "dur": dev[-1]["ts"] + dev[-1]["dur"] if dev else 1}]
        for k, e in enumerate(dev):
            name, cat = e["name"], "kernel"
            f = a.slow_factor if r == a.slow_rank else 1.0
            if name.startswith("cublas"):
                name, f = GEMM, f * a.gemm_factor
            elif name in NCCL:
                name = NCCL[name]
            elif name.startswith("cudaMemcpy"):
                name, cat = "Memcpy HtoD (Pageable -> Device)", "gpu_memcpy"
            elif name.startswith("cudaMemset"):
                name, cat = "Memset (Device)", "gpu_memset"
            corr = 100 + k
            launch = "cudaMemcpyAsync" if cat == "gpu_memcpy" else "cudaLaunchKernel"
            ev.append({"ph": "X", "cat": "cpu_op", "name": "aten::mm" if name == GEMM else "aten::add",
                       "pid": 1000 + r, "tid": 1000 + r, "ts": e["ts"] - 3, "dur": 2,
                       "args": {"External id": corr, "Sequence number": k, "Fwd thread id": 0}})
            ev.append({"ph": "X", "cat": "cuda_runtime", "name": launch, "pid": 1000 + r, "tid": 1000 + r,
                       "ts": e["ts"] - 2, "dur": 1.5, "args": {"cbid": 211, "correlation": corr}})
            dur = round(e["dur"] * f, 3)
            parts = [(name, e["ts"], dur)]
            if a.split_k and name == GEMM:
                main = round(dur * 0.8, 3)
                parts = [(name, e["ts"], main), (SPLITK, e["ts"] + main, round(dur - main, 3))]
            for pname, ts, d in parts:
                ev.append({"ph": "X", "cat": cat, "name": pname, "pid": r, "tid": 7 + e["tid"],
                           "ts": ts, "dur": d,
                           "args": {"queued": 0, "device": r, "context": 1, "stream": 7 + e["tid"],
                                    "correlation": corr, "registers per thread": 128, "shared memory": 0,
                                    "grid": [132, 1, 1], "block": [256, 1, 1], "est. achieved occupancy %": 25}})
            ev.append({"ph": "s", "id": corr, "pid": 1000 + r, "tid": 1000 + r, "ts": e["ts"] - 2,
                       "cat": "ac2g", "name": "ac2g"})
            ev.append({"ph": "f", "id": corr, "pid": r, "tid": 7 + e["tid"], "ts": e["ts"], "cat": "ac2g",
                       "name": "ac2g", "bp": "e"})
        doc = {"schemaVersion": 1,
               "deviceProperties": [{"id": r, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85029158912,
                                     "computeMajor": 9, "computeMinor": 0, "numSms": 132}],
               "distributedInfo": {"backend": "nccl", "rank": r, "world_size": len(ranks)},
               "record_shapes": 1, "with_stack": 0, "traceEvents": ev,
               "traceName": f"host_{r}.pt.trace.json", "displayTimeUnit": "ms",
               "baseTimeNanoseconds": 1700000000000000000}
        # files named so that their order is not the ranks': distributedInfo says which is which
        with open(os.path.join(a.out, f"worker{len(ranks) - r}.{1000 + r}.pt.trace.json"), "w") as fp:
            json.dump(doc, fp, indent=1)


if __name__ == "__main__":
    main()
