#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""An NCCL job on every GPU of the host for a set time: each rank multiplies bf16
matrices and all-reduces 256 MiB between steps, so that NVLink, SMs and the tensor
pipes all move while bench/multi_gpu/prom_scrape.sh has Prometheus scrape gpulens.

    python3 bench/multi_gpu/nccl_load.py --seconds 120 [--gpus N]
"""
import argparse
import os
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def rank_main(rank, world, seconds, port):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=world, device_id=torch.device("cuda", rank))
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    grad = torch.randn(128 * 1024 * 1024, device="cuda", dtype=torch.bfloat16)  # 256 MiB
    steps = 0
    end = time.time() + seconds
    while True:
        # Every rank stops at the same step: rank 0 decides, the others follow.
        flag = torch.tensor([1 if time.time() < end else 0], device="cuda")
        dist.broadcast(flag, 0)
        if flag.item() == 0:
            break
        for _ in range(4):
            a = (a @ a).clamp_(-1, 1)
        dist.all_reduce(grad)
        grad.mul_(1.0 / world)
        steps += 1
    torch.cuda.synchronize()
    if rank == 0:
        print(f"nccl_load: {world} ranks, {steps} steps in {seconds} s", flush=True)
    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=120)
    parser.add_argument("--gpus", type=int, default=torch.cuda.device_count())
    parser.add_argument("--port", type=int, default=29533)
    args = parser.parse_args()
    mp.spawn(rank_main, args=(args.gpus, args.seconds, args.port), nprocs=args.gpus, join=True)


if __name__ == "__main__":
    main()
