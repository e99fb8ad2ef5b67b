# SPDX-License-Identifier: Apache-2.0
"""gpulens in a PyTorch Lightning fit: step and phase marks for `gpulens run`,
and the GPUs' means/min/max logged with the job's own metrics.

    from gpulens.lightning_callback import GpulensCallback

    trainer = lightning.pytorch.Trainer(
        callbacks=[GpulensCallback(flops_per_step=6 * n_params * tokens_per_step)])
    trainer.fit(model, loader)

Every `trainer.log_every_n_steps` optimizer steps it hands every logger the
Trainer has (W&B, TensorBoard, CSV: `logger.log_metrics`, at the Trainer's
global step) "gpu0/gpu_util_mean", "gpu0/power_w_max", ... over the steps
since the last time; `callback.last_metrics` holds the newest such dict.
The loggers directly, not the module's log_dict: Lightning hands values
logged in a callback to the loggers only on its own logging steps, and drops
the others. Under `gpulens run` it also marks each step (with its
FLOPs, for the report's MFU) and the train and validation phases. Imports
`lightning.pytorch` (else `pytorch_lightning`, the older name): import this
module only in a job that has Lightning.
"""

try:
    from lightning.pytorch import Callback
except ImportError:  # Lightning before 2.0 is published as pytorch_lightning
    from pytorch_lightning import Callback

from .callbacks import TrainingMonitor

__all__ = ["GpulensCallback"]


class GpulensCallback(Callback):
    """flops_per_step: model FLOPs of one optimizer step (None: marks without
    FLOPs). collect/interval/agent/gpus: see gpulens.callbacks.TrainingMonitor.
    log_every_n_steps: how often to log the GPU summary (default: the
    Trainer's own)."""

    def __init__(self, flops_per_step=None, collect=True, interval=1.0, agent=None, gpus=None,
                 log_every_n_steps=None):
        super().__init__()
        self.monitor = TrainingMonitor(flops_per_step=flops_per_step, collect=collect,
                                       interval=interval, agent=agent, gpus=gpus)
        self.log_every_n_steps = log_every_n_steps
        self.last_metrics = {}
        self._seen_step = 0

    def on_train_start(self, trainer, pl_module):
        self._seen_step = trainer.global_step
        self.monitor.train_start()

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        # A mark per optimizer step: global_step counts those, and with gradient
        # accumulation several batches pass before it moves.
        step = trainer.global_step
        if step <= self._seen_step:
            return
        self.monitor.step(steps=step - self._seen_step)
        every = self.log_every_n_steps or trainer.log_every_n_steps or 50
        if step // every > self._seen_step // every:
            self.last_metrics = self.monitor.window()
            if self.last_metrics:
                for logger in trainer.loggers:
                    logger.log_metrics(self.last_metrics, step=step)
        self._seen_step = step

    def on_validation_start(self, trainer, pl_module):
        if not trainer.sanity_checking:
            self.monitor.phase_start("validation")

    def on_validation_end(self, trainer, pl_module):
        if not trainer.sanity_checking:
            self.monitor.phase_end("validation")

    def on_train_end(self, trainer, pl_module):
        self.last_metrics = self.monitor.train_end() or self.last_metrics

    def on_exception(self, trainer, pl_module, exception):
        self.monitor.train_end()  # the collector's thread stops with the fit
