// SPDX-License-Identifier: Apache-2.0
#pragma once
// The live collector: NVML for the classic counters, GPM for what the SMs really do.
// Capabilities are probed once at open; sample() only makes calls known to work.
#include <functional>
#include <memory>
#include <vector>

#include "core/result.hpp"
#include "sources/gpu_collector.hpp"
#include "sources/nvml/nvml_api.hpp"

namespace gpulens::sources {

// Time as the collector sees it; injectable so tests drive intervals without sleeping.
// Empty members mean the real clocks.
struct NvmlClock {
  std::function<double()> monotonic_s;  // steady seconds, for intervals
  std::function<double()> unix_s;       // wall-clock seconds, for event timestamps
  std::function<void(double)> sleep_s;  // used once at open, to space the GPM probe
};

struct NvmlOptions {
  bool gpm = true;        // read GPM metrics on devices that support them
  bool processes = true;  // list processes and their SM share
  std::vector<int> gpus;  // NVML device indices; empty = all
  // nvmlDeviceGetTotalEnergyConsumption costs ~4 ms of CPU, so the counter is read
  // at most this often and power x time is integrated in between. Power is a 1 s
  // average on current GPUs, so the integral drifts little between reads.
  double energy_refresh_s = 300;
  // nvmlDeviceGetProcessUtilization costs ~2 ms of CPU (driver time) per call, more
  // than all other per-tick calls but GPM together; each process's SM share is the
  // maximum over this many seconds, reused by the ticks in between.
  double process_util_every_s = 5;
  // The volatile ECC counts cost ~8 us of driver time per call, two calls a tick, and
  // change rarely; an uncorrectable error also raises an XID event at once. They are
  // read at most this often and the last counts repeated in between.
  double ecc_refresh_s = 10;
  // nvmlDeviceGetPcieReplayCounter costs ~0.18 ms of CPU per call on an H200; it
  // counts rare link faults that an alert reads over minutes. It is read at most
  // this often and the last count repeated in between (docs/nvml-facts.md).
  double link_errors_refresh_s = 30;
  // nvmlDeviceGetNvLinkErrorCounter costs ~0.9 ms of driver time per link and counter
  // on an H200 with 18 active links, 67 ms for all four counters of every link. A
  // pass reads one link a tick (no tick is made late), and one begins at most this
  // often: 0.2 ms a second per GPU on average. The sums appear once every link has
  // been read and repeat the last values in between (docs/nvml-facts.md).
  double nvlink_errors_refresh_s = 300;
  // Reads dcgm-exporter's default fields beyond the classic set (encoder/decoder
  // utilization, remapped rows, PCIe replays, NVLink errors). Off only to measure what
  // they cost (gpulens_nvml_probe --no-dcgm-fields, bench/dcgm_fields/run.sh).
  bool dcgm_fields = true;
  const NvmlApi* api = nullptr;  // inject (tests); nullptr = dlopen libnvidia-ml
  NvmlClock clock;
};

// nvmlInit_v2, then probes every selected device. The collector calls nvmlShutdown
// when destroyed. An injected api must outlive the collector.
Result<std::unique_ptr<GpuCollector>> open_nvml_collector(const NvmlOptions& options);

}  // namespace gpulens::sources
