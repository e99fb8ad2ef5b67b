#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs on the GPU machine: does launch_hook.cpp's gate (LAUNCH_HOOK_GATE=1) hang a
# job? launch_cost's paired slots (kernel loaded before the slots) at 1 in 1000 and
# every launch timed, launch_cost's <<<>>> launches with every launch timed (the first
# launch lazily loads the kernel), and PyTorch eager ops; each under a timeout, rc 124
# meaning it hung.   OUT=... bash bench/kernel_cost/gate_probe.sh
cd "$(dirname "$0")/../.."
set -u
cuda=/usr/local/cuda
bash bench/kernel_cost/build_hook.sh $OUT/libh.so || exit 1
nvcc -O2 -std=c++17 -cudart shared -o $OUT/lc bench/kernel_cost/launch_cost.cu -ldl || exit 1
export LAUNCH_HOOK_GATE=1
for s in 1000 1; do
  HOOK_PAIRED_SAMPLE=$s LD_PRELOAD=$OUT/libh.so timeout 20 $OUT/lc p 1 2 100 > $OUT/p-$s.txt 2>&1; echo "launch_cost p sample $s: rc $?"
  tail -2 $OUT/p-$s.txt
done
LD_PRELOAD=$OUT/libh.so LAUNCH_HOOK_SAMPLE=1 timeout 20 $OUT/lc s 1 2 100 > $OUT/s.txt 2>&1; echo "launch_cost s (<<<>>>, every launch timed): rc $?"; tail -2 $OUT/s.txt
HOOK_PAIRED_SAMPLE=1 LD_PRELOAD=$OUT/libh.so timeout 40 python3 bench/kernel_cost/torch_launches.py p --paired --slots 2 --slot 0.1 > $OUT/t.txt 2>&1; echo "torch eager paired sample 1: rc $?"; tail -2 $OUT/t.txt
rm -f $OUT/lc $OUT/libh.so
