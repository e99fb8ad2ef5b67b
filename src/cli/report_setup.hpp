// SPDX-License-Identifier: Apache-2.0
#pragma once
// What `gpulens run` and `gpulens report` share between reading their options
// and writing a report: the data tables, the diagnosis config, the price, and
// writing the verdict in the chosen format.
#include <optional>
#include <string>
#include <vector>

#include "core/result.hpp"
#include "core/trace_reader.hpp"
#include "kernels/view/analysis.hpp"
#include "kernels/view/launch_counts.hpp"
#include "verdict/verdict.hpp"

namespace gpulens::cli {

struct ReportSettings {
  std::optional<double> price;        // --price, per GPU-hour
  std::optional<double> peak_tflops;  // --peak-tflops, per GPU
  std::string dtype = "bf16";         // --dtype
  std::optional<double> flops_per_step;
  std::string config_path;  // --config: the diagnosis TOML (thresholds, price)
  std::string data_dir;     // --data-dir: gpu_peaks.json and prices.json overriding the built-in
  std::vector<int> gpus;    // --gpus
};

// The loaded tables outlive the options that point at them.
struct ReportTables {
  std::optional<verdict::GpuModelTable> models;
  std::optional<verdict::PriceTable> prices;
  std::vector<std::string> warnings;  // a table missing or malformed
};

// Each table from the first of `dirs` that has its file, else the built-in copy
// (verdict/data_files.hpp).
ReportTables load_report_tables(const std::vector<std::string>& dirs);
// `dirs` from --data-dir (empty: none), $GPULENS_DATA_DIR and /etc/gpulens.
ReportTables load_report_tables(const std::string& data_dir);

// Errors: a config file that does not load, a dtype the peak table does not know.
Result<verdict::VerdictOptions> make_verdict_options(const ReportSettings& settings,
                                                     const ReportTables& tables);

enum class ReportFormat { Text, Json, Html };
std::optional<ReportFormat> report_format_from_name(const std::string& name);
// By extension: .html/.htm, .json, else text.
ReportFormat report_format_for_path(const std::string& path);

// A recording and its kernel view (docs/kernels.md). The kernel records are
// summed as they are read (kernels/view/record_gatherer.hpp), never held whole: a
// 24-hour job's read in the memory of its kernel names.
struct Recording {
  Trace trace;
  std::optional<kernels::KernelView> kernels;
  std::optional<kernels::LaunchCounts> launches;  // `gpulens run`'s launch records
};
Result<Recording> read_recording(const std::string& path, TraceReadOptions options = {});

// What the kernel view says of the job's collectives, for the verdict's ranked
// fixes (verdict::CollectiveEvidence); nullopt when they hold too little kernel
// time for a communication finding.
std::optional<verdict::CollectiveEvidence> collective_evidence(const kernels::KernelView& view);
// The launch counts as the verdict's evidence for a launch-bound GPU: the most launched
// kernels by short name (instantiations of one template summed) and each GPU's rate.
verdict::LaunchEvidence launch_evidence(const kernels::LaunchCounts& counts);

// The verdict, and after it the kernel view of a recording of `gpulens run
// --kernels` and the launch counts of one of `gpulens run` (nullopt: none).
std::string render_report(const verdict::Verdict& v, const Trace& trace,
                          const std::optional<kernels::KernelView>& kernel_view,
                          const std::optional<kernels::LaunchCounts>& launches,
                          ReportFormat format);
// "-" is stdout. The file is written whole or not at all (temp file + rename).
Status write_report(const std::string& text, const std::string& path);

}  // namespace gpulens::cli
