// SPDX-License-Identifier: Apache-2.0
// Which scheduler's job holds each GPU (docs/slurm.md and docs/kubernetes.md,
// "Allocation"): a 0/1 gauge per GPU and an info series per GPU and job, so that
// rules price the GPUs a job or pod holds and does not use by account or namespace
// without a job or pod label on every per-GPU series.
#include "exposition/exposition.hpp"
#include "exposition/prom_writer.hpp"

namespace gpulens::exposition {

void render_allocation_metrics(std::string& out, const agent::LiveSnapshot& snap) {
  PromWriter w(out);
  bool family = false;
  for (const auto& g : snap.gpus) {
    // Absent without a scheduler's word (not configured, or the agent fell back to
    // processes: /api/v1/health says why), never 0: 0 would say "nobody holds it".
    if (!g.sample || !g.sample->allocations) continue;
    if (!family) {
      w.family("gpulens_gpu_allocated", "gauge",
               "1 while a scheduler's job holds the GPU (Slurm's prolog, the kubelet's "
               "pod-resources API), running anything or nothing; absent where no "
               "scheduler's allocation is read");
      family = true;
    }
    w.sample("gpulens_gpu_allocated", gpu_identity_labels(snap, g),
             g.sample->allocations->empty() ? 0 : 1);
  }
  family = false;
  for (const auto& g : snap.gpus) {
    if (!g.sample || !g.sample->allocations) continue;
    for (const auto& a : *g.sample->allocations) {
      if (!family) {
        w.family("gpulens_gpu_allocation_info", "gauge",
                 "Always 1: a job that holds the GPU, one series per GPU and job (labels "
                 "scheduler, and slurm_job, slurm_user, slurm_account, slurm_partition for "
                 "Slurm, namespace, pod, container for Kubernetes)");
        family = true;
      }
      std::string l = gpu_identity_labels(snap, g);
      append_label(l, "scheduler", a.scheduler);
      if (a.scheduler == "kubernetes") {
        append_label(l, "namespace", a.namespace_name);
        append_label(l, "pod", a.pod);
        append_label(l, "container", a.container);
      } else {
        append_label(l, "slurm_job", a.job);
        append_label(l, "slurm_user", a.user);
        append_label(l, "slurm_account", a.account);
        append_label(l, "slurm_partition", a.partition);
      }
      w.sample("gpulens_gpu_allocation_info", l, 1);
    }
  }
}

}  // namespace gpulens::exposition
