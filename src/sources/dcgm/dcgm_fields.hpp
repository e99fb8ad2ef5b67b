// SPDX-License-Identifier: Apache-2.0
#pragma once
// Which DCGM profiling field fills which gpulens metric, and how its value converts
// into the unit the GPM path stores (core/metric.cpp): DCGM gives ratios 0..1 where
// GPM gives percent, and bytes per second where GPM gives MiB/s.
#include <array>
#include <cstddef>
#include <optional>
#include <span>

#include "core/metric.hpp"
#include "sources/dcgm/dcgm_abi.hpp"

namespace gpulens::sources::dcgm {

enum class Conversion {
  RatioToPercent,     // x 100
  BytesPerSecToMibs,  // / 2^20
};

struct FieldMapping {
  unsigned short field;
  Metric metric;
  Conversion conversion;
  // The fields DCGM reads in its first pass on every generation it profiles; when the
  // whole group cannot be watched (DCGM_ST_PROFILING_MULTI_PASS) only these are.
  bool core;
};

// | DCGM field                          | id   | gpulens metric  | conversion     |
// |-------------------------------------|------|-----------------|----------------|
// | DCGM_FI_PROF_SM_UTIL_RATIO          | 1002 | sm_active       | ratio x 100    |
// | DCGM_FI_PROF_SM_OCCUPANCY_RATIO     | 1003 | sm_occupancy    | ratio x 100    |
// | DCGM_FI_PROF_TENSOR_UTIL_RATIO      | 1004 | tensor_active   | ratio x 100    |
// | DCGM_FI_PROF_DRAM_UTIL_RATIO        | 1005 | dram_active     | ratio x 100    |
// | DCGM_FI_PROF_FP64_UTIL_RATIO        | 1006 | fp64_active     | ratio x 100    |
// | DCGM_FI_PROF_FP32_UTIL_RATIO        | 1007 | fp32_active     | ratio x 100    |
// | DCGM_FI_PROF_FP16_UTIL_RATIO        | 1008 | fp16_active     | ratio x 100    |
// | DCGM_FI_PROF_PCIE_TX_BYTES          | 1009 | pcie_tx_mibs    | B/s / 1048576  |
// | DCGM_FI_PROF_PCIE_RX_BYTES          | 1010 | pcie_rx_mibs    | B/s / 1048576  |
// | DCGM_FI_PROF_NVLINK_TX_BYTES        | 1011 | nvlink_tx_mibs  | B/s / 1048576  |
// | DCGM_FI_PROF_NVLINK_RX_BYTES        | 1012 | nvlink_rx_mibs  | B/s / 1048576  |
inline constexpr std::array kFieldMappings{
    FieldMapping{kFieldSmActive, Metric::SmActive, Conversion::RatioToPercent, true},
    FieldMapping{kFieldSmOccupancy, Metric::SmOccupancy, Conversion::RatioToPercent, true},
    FieldMapping{kFieldTensorActive, Metric::TensorActive, Conversion::RatioToPercent, true},
    FieldMapping{kFieldDramActive, Metric::DramActive, Conversion::RatioToPercent, true},
    FieldMapping{kFieldFp64Active, Metric::Fp64Active, Conversion::RatioToPercent, false},
    FieldMapping{kFieldFp32Active, Metric::Fp32Active, Conversion::RatioToPercent, false},
    FieldMapping{kFieldFp16Active, Metric::Fp16Active, Conversion::RatioToPercent, false},
    FieldMapping{kFieldPcieTxBytes, Metric::PcieTxMibs, Conversion::BytesPerSecToMibs, false},
    FieldMapping{kFieldPcieRxBytes, Metric::PcieRxMibs, Conversion::BytesPerSecToMibs, false},
    FieldMapping{kFieldNvlinkTxBytes, Metric::NvlinkTxMibs, Conversion::BytesPerSecToMibs, false},
    FieldMapping{kFieldNvlinkRxBytes, Metric::NvlinkRxMibs, Conversion::BytesPerSecToMibs, false},
};

// The table holds each field once, in DCGM's order, and only fields of the table
// above: what dcgmWatchFields is given is what the table says.
consteval bool mappings_are_dcgms_profiling_fields() {
  for (std::size_t i = 0; i < kFieldMappings.size(); ++i) {
    if (kFieldMappings[i].field != kFieldSmActive + i) return false;
  }
  return kFieldMappings.size() == kFieldNvlinkRxBytes - kFieldSmActive + 1;
}
static_assert(mappings_are_dcgms_profiling_fields());

const FieldMapping* find_mapping(unsigned short field);

// One value as DCGM returned it, converted to the metric's unit; nullopt when DCGM
// said it has none: a status other than DCGM_ST_OK, a blank sentinel, a type the
// field does not have, or a number that is not finite or is negative.
std::optional<double> convert_value(const FieldMapping& mapping, const FieldValue_v2& value);

}  // namespace gpulens::sources::dcgm
