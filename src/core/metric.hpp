// SPDX-License-Identifier: Apache-2.0
#pragma once
// The metric vocabulary shared by every source and front end. Keys and units are
// those of the gpu-trace v1 format (docs/trace-format.md).
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace gpulens {

enum class Metric : std::uint8_t {
  GpuUtil,
  MemUtil,
  SmActive,
  SmOccupancy,
  TensorActive,
  HmmaActive,
  ImmaActive,
  DfmaActive,
  DramActive,
  Fp64Active,
  Fp32Active,
  Fp16Active,
  IntActive,  // integer pipe (GPM id 4); with the pipes: traces and history key by name
  GraphicsActive,
  PcieTxMibs,
  PcieRxMibs,
  NvlinkTxMibs,
  NvlinkRxMibs,
  PowerW,
  EnergyMj,
  TempC,
  MemTempC,
  SmClockMhz,
  MemClockMhz,
  ClockEventReasons,
  Pstate,
  MemUsedMib,
  HostCpuPct,
  EccCorrected,    // x_ecc_corrected: volatile corrected ECC errors since driver load
  EccUncorrected,  // x_ecc_uncorrected
  Count
};

inline constexpr std::size_t kMetricCount = static_cast<std::size_t>(Metric::Count);

enum class MetricSource : std::uint8_t { Classic, Gpm, Host };

struct MetricInfo {
  Metric id;
  std::string_view key;    // trace / JSON key
  std::string_view unit;   // "%", "MiB/s", "W", ...
  std::string_view title;  // short column title
  MetricSource source;
  bool integral;  // written without a fractional part (clocks, pstate, bitmasks)
};

const MetricInfo& metric_info(Metric m);
const std::array<MetricInfo, kMetricCount>& all_metrics();
std::optional<Metric> metric_from_key(std::string_view key);

inline constexpr std::size_t index_of(Metric m) {
  return static_cast<std::size_t>(m);
}

}  // namespace gpulens
