// SPDX-License-Identifier: Apache-2.0
#pragma once
// The reader of kernel records of versions 1 to 3 (docs/kernels.md, "The record
// in the recording"): one JSON record per process, read field by field through
// checked readers into plain types (version 4, a record in chunk lines, has its
// own reader: chunk_record_read.hpp). The record comes from a file
// the job's processes wrote (any process of the job can write anything there),
// so no field is trusted: a field of the wrong type, a negative count or an array
// of the wrong length makes the whole record unreadable, with the field named,
// and the analysis skips it with that line instead of stopping. A field that is
// absent (or null) takes its default, as records of older versions need.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/result.hpp"
#include "kernels/record/launch_shape.hpp"

namespace gpulens::kernels {

// [start_ns, end_ns] relative to the record's clock base.
using NsSpan = std::pair<std::int64_t, std::int64_t>;

struct NvtxRecord {
  std::string status;
  std::string reason;
  struct Range {
    std::string domain;
    std::string name = "(unnamed)";
    std::uint64_t count = 0, total_ns = 0;
  };
  std::vector<Range> ranges;
  struct Instance {
    std::int64_t start_ns = 0, end_ns = 0;
    std::uint64_t range = 0;  // index into `ranges`
  };
  std::vector<Instance> instances;
  std::uint64_t instances_dropped = 0, names_folded = 0, unmatched = 0;
};

struct LegacyRecord {
  std::optional<std::int64_t> pid;
  std::string status = "ok";
  std::string reason;
  std::optional<double> yielded_ns;
  std::uint64_t dropped = 0;
  bool has_clock = false;
  std::int64_t base_unix_ns = 0;  // clock.base_unix_ns, never negative
  struct Device {
    std::uint32_t id = 0;
    std::string name;
    SmLimits limits;
  };
  std::vector<Device> devices;
  struct Kernel {
    std::string name = "(unnamed)";
    std::uint32_t device = 0;
    std::uint64_t count = 0, total_ns = 0;
    std::vector<std::pair<int, std::uint64_t>> hist;  // [bucket, count]
    LaunchShape shape;
  };
  std::vector<Kernel> kernels;
  struct Copy {
    std::string kind = "unknown", src = "unknown", dst = "unknown";
    std::uint64_t count = 0, bytes = 0, total_ns = 0;
  };
  std::vector<Copy> copies;
  std::uint64_t memsets = 0;  // summed over devices
  std::vector<NsSpan> syncs;
  struct Busy {
    std::uint32_t device = 0;
    std::vector<NsSpan> intervals;
  };
  std::vector<Busy> busy;
  struct Sampling {
    double window_s = 0, every_s = 0, first_s = 0;
  };
  std::optional<Sampling> sampling;
  std::vector<NsSpan> windows;  // read with `sampling` only
  std::optional<NvtxRecord> nvtx;
};

// The record, or the first field at fault: "field `kernels[2].name` is not a string".
Result<LegacyRecord> read_legacy_record(const nlohmann::json& record);

// A record in the line that says it was skipped: "kernel record of process 1234",
// or "kernel record 3" (its place among the records, from 1) without a readable pid.
std::string kernel_record_name(const nlohmann::json& record, std::size_t index);

}  // namespace gpulens::kernels
