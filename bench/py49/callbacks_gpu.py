#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The installed gpulens wheel on a real GPU (run by bench/py49/run.sh): the
in-process API on the real NVML, GpulensCallback in a real PyTorch Lightning
fit and GpulensTrainerCallback in a real Hugging Face Trainer loop (models
built from code and configs, random weights and data: nothing downloaded).
Checks, per framework: a step mark per optimizer step with its FLOPs, the
phases, and GPU summaries in the framework's own logs. Prints a table; writes
results.md and results.json to the directory given.

    python3 callbacks_gpu.py OUT_DIR
"""

import csv
import glob
import json
import os
import sys
import tempfile
import time

import gpulens

OUT = sys.argv[1] if len(sys.argv) > 1 else "."
results = {"checks": [], "frameworks": {}}


def check(what, ok, detail=""):
    results["checks"].append({"check": what, "ok": bool(ok), "detail": str(detail)})
    print("%s  %s%s" % ("ok  " if ok else "FAIL", what, (": %s" % detail) if detail else ""),
          flush=True)


def marks_of(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def in_process_api():
    check("gpulens imported from the installed wheel, not a checkout",
          "site-packages" in gpulens.__file__ or "gpulens-site" in gpulens.__file__,
          gpulens.__file__)
    devices = gpulens.devices()
    check("gpulens.devices() on the real NVML", devices, [(d.index, d.name) for d in devices])
    import torch
    x = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    with gpulens.collect(interval=0.1) as c:
        t0 = time.time()
        while time.time() - t0 < 3:
            x = (x @ x).clamp_(-1, 1)
        torch.cuda.synchronize()
    m = c.metrics()
    procs = gpulens.processes()
    check("collect() over 3 s of bf16 matmuls: GPU busy", m.get("gpu0/gpu_util_mean", 0) > 50,
          {k: round(v, 1) for k, v in m.items() if k.startswith("gpu0/") and
           k.split("/")[1].startswith(("gpu_util", "power_w", "sm_clock"))})
    # In a container NVML may give the host's PIDs: any process, and whether
    # this one's PID is among them, said.
    check("processes() lists the process on the GPU", procs,
          "%s (this pid %d %s)" % (procs, os.getpid(),
                                   "among them" if any(p["pid"] == os.getpid() for p in procs)
                                   else "not among them: another PID namespace"))
    results["in_process"] = {"devices": [d.info for d in devices], "collect": m,
                             "this_process": procs}
    del x
    torch.cuda.empty_cache()


def lightning_fit(tmp):
    import torch
    try:
        import lightning.pytorch as pl
        from lightning.pytorch.loggers import CSVLogger
    except ImportError:
        import pytorch_lightning as pl
        from pytorch_lightning.loggers import CSVLogger
    from gpulens.lightning_callback import GpulensCallback

    width, batch, steps, every = 2048, 512, 120, 20

    class MLP(pl.LightningModule):
        def __init__(self):
            super().__init__()
            self.net = torch.nn.Sequential(torch.nn.Linear(width, 4 * width), torch.nn.GELU(),
                                           torch.nn.Linear(4 * width, width))

        def training_step(self, b, i):
            x, y = b
            loss = torch.nn.functional.mse_loss(self.net(x), y)
            self.log("train_loss", loss)
            return loss

        def validation_step(self, b, i):
            x, y = b
            self.log("val_loss", torch.nn.functional.mse_loss(self.net(x), y))

        def configure_optimizers(self):
            return torch.optim.AdamW(self.parameters(), lr=1e-4)

    model = MLP()
    params = sum(p.numel() for p in model.parameters())
    flops = 6.0 * params * batch
    data = torch.utils.data.TensorDataset(torch.randn(batch * 200, width),
                                          torch.randn(batch * 200, width))
    train = torch.utils.data.DataLoader(data, batch_size=batch, shuffle=True)
    val = torch.utils.data.DataLoader(torch.utils.data.Subset(data, range(batch * 4)),
                                      batch_size=batch)
    marks = os.path.join(tmp, "lightning.marks.jsonl")
    os.environ["GPULENS_MARKS"] = marks
    callback = GpulensCallback(flops_per_step=flops, interval=0.1)
    logger = CSVLogger(tmp, name="lightning")
    trainer = pl.Trainer(accelerator="gpu", devices=1, max_steps=steps, log_every_n_steps=every,
                         val_check_interval=60, limit_val_batches=4, logger=logger,
                         callbacks=[callback], enable_checkpointing=False,
                         enable_progress_bar=False, enable_model_summary=False,
                         num_sanity_val_steps=0)
    t0 = time.time()
    trainer.fit(model, train, val)
    seconds = time.time() - t0
    os.environ.pop("GPULENS_MARKS")
    rows = []
    for path in glob.glob(os.path.join(logger.log_dir, "metrics.csv")):
        with open(path) as f:
            rows = [r for r in csv.DictReader(f) if r.get("gpu0/gpu_util_mean")]
    got = marks_of(marks)
    steps_marked = [m for m in got if m["mark"] == "step"]
    names = [m["mark"] for m in got if m["mark"] != "step"]
    check("Lightning: a step mark per optimizer step, with its FLOPs",
          len(steps_marked) == trainer.global_step and
          all(m.get("flops") == flops for m in steps_marked),
          "%d marks, %d steps" % (len(steps_marked), trainer.global_step))
    check("Lightning: train and validation phases marked",
          names[:1] == ["train:start"] and names[-1:] == ["train:end"] and
          names.count("validation:start") == names.count("validation:end") >= 1, names)
    logged_steps = sorted({int(float(r["step"])) for r in rows})
    check("Lightning: GPU summaries in the CSV logger, every %d steps" % every,
          logged_steps == list(range(every, steps + 1, every)), logged_steps)
    mean = [float(r["gpu0/gpu_util_mean"]) for r in rows]
    results["frameworks"]["lightning"] = {
        "version": pl.__version__, "steps": trainer.global_step, "step_marks": len(steps_marked),
        "phases": names, "windows_logged": len(rows), "seconds": round(seconds, 1),
        "gpu_util_mean_per_window": mean,
        "power_w_mean_per_window": [float(r["gpu0/power_w_mean"]) for r in rows
                                    if r.get("gpu0/power_w_mean")],
        "mem_used_mib_max": max([float(r["gpu0/mem_used_mib_max"]) for r in rows
                                 if r.get("gpu0/mem_used_mib_max")] or [0]),
        "last_metrics": callback.last_metrics,
    }


def hf_trainer(tmp):
    import torch
    import transformers
    from transformers import (BertConfig, BertForSequenceClassification, Trainer,
                              TrainingArguments)
    from gpulens.hf_callback import GpulensTrainerCallback

    seq, batch, steps, every = 128, 32, 60, 10
    config = BertConfig(vocab_size=4096, hidden_size=512, num_hidden_layers=6,
                        num_attention_heads=8, intermediate_size=2048,
                        max_position_embeddings=seq, num_labels=2)
    model = BertForSequenceClassification(config)
    params = sum(p.numel() for p in model.parameters())
    flops = 6.0 * params * batch * seq

    class Random(torch.utils.data.Dataset):
        def __len__(self):
            return batch * steps * 2

        def __getitem__(self, i):
            g = torch.Generator().manual_seed(i)
            return {"input_ids": torch.randint(0, config.vocab_size, (seq,), generator=g),
                    "attention_mask": torch.ones(seq, dtype=torch.long),
                    "labels": torch.tensor(i % 2)}

    marks = os.path.join(tmp, "hf.marks.jsonl")
    os.environ["GPULENS_MARKS"] = marks
    callback = GpulensTrainerCallback(flops_per_step=flops, interval=0.1)
    args = TrainingArguments(output_dir=os.path.join(tmp, "hf"), max_steps=steps,
                             per_device_train_batch_size=batch, logging_steps=every,
                             report_to="none", save_strategy="no", disable_tqdm=True,
                             bf16=True, dataloader_num_workers=0)
    trainer = Trainer(model=model, args=args, train_dataset=Random(), callbacks=[callback])
    # As python/README.md says: first, so that reporters would see the metrics too.
    trainer.callback_handler.callbacks.insert(0, trainer.pop_callback(GpulensTrainerCallback))
    t0 = time.time()
    trainer.train()
    seconds = time.time() - t0
    os.environ.pop("GPULENS_MARKS")
    logged = [h for h in trainer.state.log_history if "loss" in h]
    with_gpu = [h for h in logged if "gpu0/gpu_util_mean" in h]
    got = marks_of(marks)
    steps_marked = [m for m in got if m["mark"] == "step"]
    names = [m["mark"] for m in got if m["mark"] != "step"]
    check("Trainer: a step mark per optimizer step, with its FLOPs",
          len(steps_marked) == trainer.state.global_step and
          all(m.get("flops") == flops for m in steps_marked),
          "%d marks, %d steps" % (len(steps_marked), trainer.state.global_step))
    check("Trainer: train phase marked", names == ["train:start", "train:end"], names)
    check("Trainer: GPU summaries in every log of log_history",
          logged and len(with_gpu) == len(logged),
          "%d of %d logs" % (len(with_gpu), len(logged)))
    results["frameworks"]["transformers"] = {
        "version": transformers.__version__, "steps": trainer.state.global_step,
        "step_marks": len(steps_marked), "phases": names, "windows_logged": len(with_gpu),
        "seconds": round(seconds, 1),
        "gpu_util_mean_per_window": [h["gpu0/gpu_util_mean"] for h in with_gpu],
        "power_w_mean_per_window": [h.get("gpu0/power_w_mean") for h in with_gpu],
        "mem_used_mib_max": max([h.get("gpu0/mem_used_mib_max", 0) for h in with_gpu] or [0]),
        "last_metrics": callback.last_metrics,
    }


def table():
    lines = ["| framework | version | optimizer steps | step marks | GPU windows logged | "
             "gpu_util mean (per window) | power W mean (per window) | memory used max MiB | "
             "seconds |", "|---|---|---|---|---|---|---|---|---|"]
    for name, r in results["frameworks"].items():
        lines.append("| %s | %s | %d | %d | %d | %s | %s | %.0f | %.1f |" % (
            name, r["version"], r["steps"], r["step_marks"], r["windows_logged"],
            ", ".join("%.0f" % v for v in r["gpu_util_mean_per_window"]),
            ", ".join("%.0f" % v for v in r["power_w_mean_per_window"] if v is not None),
            r["mem_used_mib_max"], r["seconds"]))
    return "\n".join(lines)


def main():
    import torch
    results["python"] = sys.version.split()[0]
    results["torch"] = torch.__version__
    results["gpu"] = torch.cuda.get_device_name(0)
    results["install"] = os.environ.get("INSTALL_ROUTE", "")
    results["gpulens"] = {"version": gpulens.__version__, "file": gpulens.__file__}
    tmp = tempfile.mkdtemp(prefix="gpulens-py49-")
    for step in (in_process_api, lambda: lightning_fit(tmp), lambda: hf_trainer(tmp)):
        try:
            step()
        except Exception as e:  # one framework failing still reports the others
            import traceback
            traceback.print_exc()
            check("ran without an exception", False, "%s: %s" % (type(e).__name__, e))
    text = "\n".join([
        "# gpulens issue 49 on %s" % results["gpu"], "",
        "Python %s, torch %s; gpulens %s installed by: %s" % (
            results["python"], results["torch"], results["gpulens"]["version"],
            results["install"]), "",
        table(), "",
        "\n".join("- %s %s%s" % ("ok" if c["ok"] else "FAIL", c["check"],
                                 (": " + c["detail"]) if c["detail"] else "")
                  for c in results["checks"]), ""])
    print("\n" + text)
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "results.md"), "w") as f:
        f.write(text)
    with open(os.path.join(OUT, "results.json"), "w") as f:
        json.dump(results, f, indent=1, default=str)
    return 0 if all(c["ok"] for c in results["checks"]) else 1


if __name__ == "__main__":
    sys.exit(main())
