# SPDX-License-Identifier: Apache-2.0
"""gpulens in a Hugging Face Trainer: step and phase marks for `gpulens run`,
and the GPUs' means/min/max in the Trainer's own logs.

    from gpulens.hf_callback import GpulensTrainerCallback

    trainer = transformers.Trainer(model=model, args=args, train_dataset=data,
                                   callbacks=[GpulensTrainerCallback(flops_per_step=F)])
    trainer.train()

At each of the Trainer's logs (`logging_steps`) it adds "gpu0/gpu_util_mean",
"gpu0/power_w_max", ... over the steps since the previous log to the logs
and to `state.log_history`. The reporters (`report_to`: W&B, TensorBoard) are
callbacks too and run in order, those of report_to before the ones passed in
`callbacks=`: for them to see the GPU metrics, put this one first:
`trainer.callback_handler.callbacks.insert(0, trainer.pop_callback(GpulensTrainerCallback))`.
Under `gpulens run` it also marks each optimizer step (with its FLOPs, for the
report's MFU) and the training phase. Imports `transformers`: import this
module only in a job that has it.
"""

from transformers import TrainerCallback

from .callbacks import TrainingMonitor

__all__ = ["GpulensTrainerCallback"]


class GpulensTrainerCallback(TrainerCallback):
    """flops_per_step: model FLOPs of one optimizer step (None: marks without
    FLOPs). collect/interval/agent/gpus: see gpulens.callbacks.TrainingMonitor."""

    def __init__(self, flops_per_step=None, collect=True, interval=1.0, agent=None, gpus=None):
        self.monitor = TrainingMonitor(flops_per_step=flops_per_step, collect=collect,
                                       interval=interval, agent=agent, gpus=gpus)
        self.last_metrics = {}

    def on_train_begin(self, args, state, control, **kwargs):
        self.monitor.train_start()

    def on_step_end(self, args, state, control, **kwargs):
        # Called once per optimizer step (after gradient accumulation).
        self.monitor.step()

    def on_log(self, args, state, control, logs=None, **kwargs):
        summary = self.monitor.window()
        if not summary:
            return
        self.last_metrics = summary
        if logs is not None:
            logs.update(summary)
        # The Trainer appended its own copy of these logs just before this call.
        if state.log_history and state.log_history[-1].get("step") == state.global_step:
            state.log_history[-1].update(summary)

    def on_train_end(self, args, state, control, **kwargs):
        self.last_metrics = self.monitor.train_end() or self.last_metrics
