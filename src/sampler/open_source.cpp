// SPDX-License-Identifier: Apache-2.0
#include "sampler/open_source.hpp"

#include "sampler/sampler.hpp"
#include "sources/nvml/nvml_collector.hpp"
#include "sources/replay/replay_source.hpp"

namespace gpulens::sampler {

Result<std::unique_ptr<sources::TickSource>> open_tick_source(const SourceOptions& options) {
  if (!options.replay.empty()) {
    auto replay =
        sources::ReplaySource::open(options.replay, options.speed, options.lenient, options.gpus);
    if (!replay) return replay.error();
    return std::unique_ptr<sources::TickSource>(std::move(*replay));
  }
  sources::NvmlOptions nvml;
  nvml.gpm = options.gpm;
  nvml.processes = options.processes;
  nvml.process_util_every_s = options.process_util_every_s;
  nvml.gpus = options.gpus;
  auto collector = sources::open_nvml_collector(nvml);
  if (!collector) return collector.error();
  SamplerOptions sampler;
  sampler.interval_s = options.interval_s;
  sampler.host.procfs_root = options.procfs;
  sampler.host.with_cmdline = options.cmdline;
  sampler.marks_path = options.marks_path;
  sampler.slurm_allocations.dir = options.slurm_allocations;
  sampler.kube_allocations.socket = options.pod_resources;
  sampler.kube_allocations.period_s = options.pod_resources_every_s;
  return std::unique_ptr<sources::TickSource>(std::make_unique<Sampler>(
      std::shared_ptr<sources::GpuCollector>(std::move(*collector)), sampler));
}

}  // namespace gpulens::sampler
