#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A stand-in for a job that opted in to kernel summaries (docs/kernels-agent.md):
every --every seconds it sends the node's agent one summary datagram, as the
injection library does at the end of each trace window, for --devices CUDA
devices. Its kernels are a training step's or an inference server's (--kind);
--jit N adds N kernels per window whose names were never seen before (what
torch.compile or a JIT emits, and the worst case for the agent's series cap).

The agent believes only the kernel's peer credentials, so this process's own PID
must be on the GPUs in the agent's samples: tools/fleet/fleet_sim.py writes it
into the replayed recording. Sends fail silently while no agent listens, as the
library's do (counted in the next summary's `summaries_dropped`).

Every other window it also sends its launch counts since it started, as
libgpulens_launches.so does with GPULENS_LAUNCHES_AGENT (docs/kernels-agent.md,
"Launch counts"): its kernels' launches grow by their share of 1,000 a window, and
each JIT kernel by one.
"""
import argparse
import json
import os
import socket
import time

KERNELS = {
    "train": [
        ("void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_128x256_64x3_tn_align8>"
         "(cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_128x256_64x3_tn_align8::Params)", 0.40),
        ("void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t>,"
         " false, true, false, false, false, false, false>(Flash_fwd_params)", 0.15),
        ("void flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits<128, 64, 128, 8>>"
         "(Flash_bwd_params)", 0.12),
        ("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 0.08),
        ("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>,"
         " at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, "
         "at::detail::Array<char*, 3>)", 0.05),
        ("void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, "
         "at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(float*, float const*, int)", 0.03),
        ("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, "
         "at::native::MeanOps<float, float, float, float>, unsigned int, float, 4> >"
         "(at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, "
         "unsigned int, float, 4>)", 0.02),
        ("void multi_tensor_apply_kernel<TensorListMetadata<4>, AdamFunctor<float>, float>"
         "(long, int volatile*, TensorListMetadata<4>, AdamFunctor<float>, float)", 0.02),
    ],
    "serve": [
        ("void paged_attention_v2_kernel<__nv_bfloat16, 128, 16, 128, 512>"
         "(float*, float*, __nv_bfloat16*, __nv_bfloat16 const*, int)", 0.30),
        ("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_"
         "segment_k_off_kernel__5x_cublas", 0.20),
        ("void vllm::rms_norm_kernel<c10::BFloat16>(c10::BFloat16*, c10::BFloat16 const*, "
         "c10::BFloat16 const*, float, int, int)", 0.04),
        ("void vllm::rotary_embedding_kernel<c10::BFloat16, true>(long const*, c10::BFloat16*, "
         "c10::BFloat16*, c10::BFloat16 const*, int, long, long, int, int, int)", 0.03),
        ("void vllm::act_and_mul_kernel<c10::BFloat16, &vllm::silu_kernel<c10::BFloat16>, true>"
         "(c10::BFloat16*, c10::BFloat16 const*, int)", 0.03),
        ("void vllm::cross_device_reduce_1stage<__nv_bfloat16, 2>(vllm::RankData*, vllm::RankSignals, "
         "vllm::Signal*, __nv_bfloat16*, int, int)", 0.02),
    ],
}


def summary(seq, devices, kind, jit, dropped, window_s):
    end = time.time_ns()
    start = end - int(window_s * 1e9)
    span = end - start
    devs = []
    for d in range(devices):
        top = [{"name": n, "launches": 100, "ns": int(share * span)} for n, share in KERNELS[kind]]
        for j in range(jit):
            top.append({"name": f"triton_poi_fused_add_mul_{seq}_{d}_{j}", "launches": 1,
                        "ns": int(0.01 * span)})
        top.sort(key=lambda k: -k["ns"])
        rest = top[10:]
        top = top[:10]
        busy = sum(k["ns"] for k in top) + sum(k["ns"] for k in rest)
        coll = sum(k["ns"] for k in top if k["name"].startswith(("nccl", "void vllm::cross_device")))
        devs.append({
            "device": d, "busy_ns": busy, "idle_ns": span - busy, "top": top,
            "other": {"kernels": len(rest), "launches": len(rest), "ns": sum(k["ns"] for k in rest)},
            "collectives": {"count": 100, "ns": coll},
            "copies": {"count": 12, "bytes": 1 << 26, "ns": int(0.02 * span)},
            "memsets": {"count": 4, "bytes": 1 << 20, "ns": int(0.001 * span)},
        })
    return {"x_kernel_summary": 1, "seq": seq, "start_unix_ns": start, "end_unix_ns": end,
            "window": True, "cupti_dropped": 0, "summaries_dropped": dropped, "devices": devs}


def launch_record(first_ns, counts):
    """The process's launch record (src/kernels/record/launch_record.hpp): counts since
    its start, the 32 most launched named, the rest unlisted."""
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    listed = ranked[:32]
    total = sum(counts.values())
    return {"x_launches": 1, "pid": os.getpid(), "comm": "python3", "first_ns": first_ns,
            "written_ns": time.time_ns(), "final": False, "kernel_launches": total,
            "graph_launches": 0, "graphs": 0,
            "unlisted_launches": total - sum(n for _, n in listed),
            "kernels": [{"name": name, "launches": n} for name, n in listed]}


def add_launches(counts, seq, devices, kind, jit):
    for name, share in KERNELS[kind]:
        counts[name] = counts.get(name, 0) + round(share * 1000) * devices
    for d in range(devices):
        for j in range(jit):
            counts[f"triton_poi_fused_add_mul_{seq}_{d}_{j}"] = 1


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--socket", required=True, help="the agent's --kernels-socket")
    ap.add_argument("--devices", type=int, default=1)
    ap.add_argument("--kind", choices=sorted(KERNELS), default="train")
    ap.add_argument("--jit", type=int, default=0, help="never-seen kernel names per device and window")
    ap.add_argument("--every", type=float, default=2.0, help="seconds between summaries")
    ap.add_argument("--window", type=float, default=1.0, help="seconds each window traced")
    a = ap.parse_args()
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.setblocking(False)
    seq, dropped = 0, 0
    first_ns, launches = time.time_ns(), {}
    while True:
        data = json.dumps(summary(seq, a.devices, a.kind, a.jit, dropped, a.window)).encode()
        try:
            s.sendto(data, a.socket)
            dropped = 0
        except OSError:
            dropped += 1
        add_launches(launches, seq, a.devices, a.kind, a.jit)
        if seq % 2 == 1:  # the agent allows a process a datagram a second, in bursts of 5
            try:
                s.sendto(json.dumps(launch_record(first_ns, launches)).encode(), a.socket)
            except OSError:
                pass
        seq += 1
        time.sleep(a.every)


if __name__ == "__main__":
    main()
