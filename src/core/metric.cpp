// SPDX-License-Identifier: Apache-2.0
#include "core/metric.hpp"

namespace gpulens {
namespace {

using S = MetricSource;
constexpr std::array<MetricInfo, kMetricCount> kMetrics{{
    {Metric::GpuUtil, "gpu_util", "%", "util", S::Classic, false},
    {Metric::MemUtil, "mem_util", "%", "memutil", S::Classic, false},
    {Metric::SmActive, "sm_active", "%", "sm_act", S::Gpm, false},
    {Metric::SmOccupancy, "sm_occupancy", "%", "occ", S::Gpm, false},
    {Metric::TensorActive, "tensor_active", "%", "tensor", S::Gpm, false},
    {Metric::HmmaActive, "hmma_active", "%", "hmma", S::Gpm, false},
    {Metric::ImmaActive, "imma_active", "%", "imma", S::Gpm, false},
    {Metric::DfmaActive, "dfma_active", "%", "dfma", S::Gpm, false},
    {Metric::DramActive, "dram_active", "%", "dram", S::Gpm, false},
    {Metric::Fp64Active, "fp64_active", "%", "fp64", S::Gpm, false},
    {Metric::Fp32Active, "fp32_active", "%", "fp32", S::Gpm, false},
    {Metric::Fp16Active, "fp16_active", "%", "fp16", S::Gpm, false},
    {Metric::IntActive, "int_active", "%", "int", S::Gpm, false},
    {Metric::GraphicsActive, "graphics_active", "%", "gr", S::Gpm, false},
    {Metric::PcieTxMibs, "pcie_tx_mibs", "MiB/s", "pcie_tx", S::Gpm, false},
    {Metric::PcieRxMibs, "pcie_rx_mibs", "MiB/s", "pcie_rx", S::Gpm, false},
    {Metric::NvlinkTxMibs, "nvlink_tx_mibs", "MiB/s", "nvl_tx", S::Gpm, false},
    {Metric::NvlinkRxMibs, "nvlink_rx_mibs", "MiB/s", "nvl_rx", S::Gpm, false},
    {Metric::PowerW, "power_w", "W", "power", S::Classic, false},
    {Metric::EnergyMj, "energy_mj", "mJ", "energy", S::Classic, true},
    {Metric::TempC, "temp_c", "C", "temp", S::Classic, true},
    {Metric::MemTempC, "mem_temp_c", "C", "memtemp", S::Classic, true},
    {Metric::SmClockMhz, "sm_clock_mhz", "MHz", "smclk", S::Classic, true},
    {Metric::MemClockMhz, "mem_clock_mhz", "MHz", "memclk", S::Classic, true},
    {Metric::ClockEventReasons, "clock_event_reasons", "mask", "reasons", S::Classic, true},
    {Metric::Pstate, "pstate", "", "pstate", S::Classic, true},
    {Metric::MemUsedMib, "mem_used_mib", "MiB", "mem_used", S::Classic, true},
    {Metric::HostCpuPct, "host_cpu_pct", "%", "host_cpu", S::Host, false},
    {Metric::EccCorrected, "x_ecc_corrected", "", "ecc_corr", S::Classic, true},
    {Metric::EccUncorrected, "x_ecc_uncorrected", "", "ecc_unc", S::Classic, true},
    {Metric::EncUtil, "x_enc_util", "%", "enc", S::Classic, false},
    {Metric::DecUtil, "x_dec_util", "%", "dec", S::Classic, false},
    {Metric::RemappedRowsCorrectable, "x_remapped_rows_correctable", "", "remap_corr", S::Classic,
     true},
    {Metric::RemappedRowsUncorrectable, "x_remapped_rows_uncorrectable", "", "remap_unc",
     S::Classic, true},
    {Metric::RowRemapFailure, "x_row_remap_failure", "", "remap_fail", S::Classic, true},
    {Metric::PcieReplays, "x_pcie_replays", "", "pcie_replay", S::Classic, true},
    {Metric::NvlinkCrcFlitErrors, "x_nvlink_crc_flit_errors", "", "nvl_flit", S::Classic, true},
    {Metric::NvlinkCrcDataErrors, "x_nvlink_crc_data_errors", "", "nvl_data", S::Classic, true},
    {Metric::NvlinkReplayErrors, "x_nvlink_replay_errors", "", "nvl_replay", S::Classic, true},
    {Metric::NvlinkRecoveryErrors, "x_nvlink_recovery_errors", "", "nvl_recov", S::Classic, true},
}};

constexpr bool table_is_in_enum_order() {
  for (std::size_t i = 0; i < kMetrics.size(); ++i) {
    if (static_cast<std::size_t>(kMetrics[i].id) != i) return false;
  }
  return true;
}
static_assert(table_is_in_enum_order(), "kMetrics must list metrics in enum order");

}  // namespace

const MetricInfo& metric_info(Metric m) {
  return kMetrics[index_of(m)];
}
const std::array<MetricInfo, kMetricCount>& all_metrics() {
  return kMetrics;
}

std::optional<Metric> metric_from_key(std::string_view key) {
  for (const auto& info : kMetrics) {
    if (info.key == key) return info.id;
  }
  return std::nullopt;
}

}  // namespace gpulens
