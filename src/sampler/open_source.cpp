// SPDX-License-Identifier: Apache-2.0
#include "sampler/open_source.hpp"

#include <algorithm>

#include "sampler/sampler.hpp"
#include "sources/dcgm/dcgm_overlay.hpp"
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
  auto dcgm = sources::parse_dcgm_option(options.dcgm);
  if (!dcgm) return dcgm.error();
  // DCGM samples the fields itself at the sampler's pace (its profiling floor is
  // 100 ms), and gpulens reads its latest values as often.
  dcgm->update_period_s = std::clamp(options.interval_s, 0.1, 10.0);
  dcgm->poll_period_s = dcgm->update_period_s;
  sources::NvmlOptions nvml;
  nvml.gpm = options.gpm;
  nvml.processes = options.processes;
  nvml.process_util_every_s = options.process_util_every_s;
  nvml.gpus = options.gpus;
  auto nvml_collector = sources::open_nvml_collector(nvml);
  if (!nvml_collector) return nvml_collector.error();
  std::unique_ptr<sources::GpuCollector> collector =
      sources::with_dcgm(std::move(*nvml_collector), *dcgm);
  SamplerOptions sampler;
  sampler.interval_s = options.interval_s;
  sampler.host.procfs_root = options.procfs;
  sampler.host.with_cmdline = options.cmdline;
  sampler.marks_path = options.marks_path;
  sampler.slurm_allocations.dir = options.slurm_allocations;
  sampler.kube_allocations.socket = options.pod_resources;
  sampler.kube_allocations.period_s = options.pod_resources_every_s;
  return std::unique_ptr<sources::TickSource>(std::make_unique<Sampler>(
      std::shared_ptr<sources::GpuCollector>(std::move(collector)), sampler));
}

}  // namespace gpulens::sampler
