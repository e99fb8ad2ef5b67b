# SPDX-License-Identifier: Apache-2.0
"""A GPU-bound training job for what libgpulens_launches.so costs training (issue 51):
a bf16 transformer encoder (4 layers, width 2048, batch 16 x 1024 tokens) trained with
AdamW. After WARM steps it runs for SECONDS and prints one JSON line: steps a second,
the steps timed, and the last loss (the same seed gives the same loss with or without
the library). Device_run.sh alternates it bare and under the library, round by round.

  python3 train_job.py SECONDS [WARM]"""
import json
import sys
import time

import torch


def main(seconds, warm):
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(2048, 16, 8192, dropout=0.0, batch_first=True)
    model = torch.nn.TransformerEncoder(layer, 4, enable_nested_tensor=False).cuda().to(torch.bfloat16)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randn(16, 1024, 2048, device="cuda", dtype=torch.bfloat16)

    def step():
        opt.zero_grad(set_to_none=True)
        loss = model(x).float().pow(2).mean()
        loss.backward()
        opt.step()
        return loss

    for _ in range(warm):
        step()
    torch.cuda.synchronize()
    steps = 0
    t0 = time.perf_counter()
    while True:
        loss = step()
        steps += 1
        if steps % 5 == 0:
            torch.cuda.synchronize()
            if time.perf_counter() - t0 >= seconds:
                break
    elapsed = time.perf_counter() - t0
    print(json.dumps({"steps": steps, "seconds": round(elapsed, 4),
                      "steps_per_s": round(steps / elapsed, 5), "loss": float(loss.item())}))


if __name__ == "__main__":
    main(float(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 10)
