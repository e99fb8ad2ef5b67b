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
  // dcgm-exporter's default fields that NVML gives (issue 48); x_ keys, as the
  // trace format names readings beyond its core set.
  EncUtil,                    // x_enc_util: video encoder busy, %
  DecUtil,                    // x_dec_util: video decoder busy, %
  RemappedRowsCorrectable,    // x_remapped_rows_correctable: rows remapped for correctable errors
  RemappedRowsUncorrectable,  // x_remapped_rows_uncorrectable
  RowRemapFailure,            // x_row_remap_failure: 1 once a remap failed (the GPU needs service)
  PcieReplays,                // x_pcie_replays: PCIe replay counter (read every ~30 s)
  NvlinkCrcFlitErrors,        // x_nvlink_crc_flit_errors: summed over active links (~30 s)
  NvlinkCrcDataErrors,        // x_nvlink_crc_data_errors
  NvlinkReplayErrors,         // x_nvlink_replay_errors
  NvlinkRecoveryErrors,       // x_nvlink_recovery_errors
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
