// SPDX-License-Identifier: Apache-2.0
#include "cli/report_setup.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

#include "kernels/record/kernel_label.hpp"
#include "kernels/view/analysis.hpp"
#include "kernels/view/collectives.hpp"
#include "kernels/view/kernel_findings.hpp"
#include "kernels/view/record_gatherer.hpp"
#include "render/kernels_output.hpp"
#include "render/launches_output.hpp"
#include "render/verdict_output.hpp"
#include "verdict/data_files.hpp"

namespace gpulens::cli {

namespace {

// One table: the first directory's file, else the built-in copy. A file that
// does not parse is reported and the built-in copy used, so a broken override
// costs a warning, not the report's MFU and price.
template <class Table>
std::optional<Table> load_table(const std::string& name, const std::vector<std::string>& dirs,
                                std::vector<std::string>& warnings) {
  if (const auto path = verdict::find_data_file(name, dirs)) {
    auto table = Table::load(*path);
    if (table) return std::move(*table);
    warnings.push_back(table.error().message + "; using the built-in " + name);
  }
  const auto text = verdict::builtin_data_file(name);
  if (!text) {
    warnings.push_back(name + " is not built in and was not found");
    return std::nullopt;
  }
  auto table = Table::parse(std::string(*text), verdict::builtin_data_origin(name));
  if (!table) {
    warnings.push_back(table.error().message);
    return std::nullopt;
  }
  return std::move(*table);
}

}  // namespace

ReportTables load_report_tables(const std::vector<std::string>& dirs) {
  ReportTables t;
  t.models = load_table<verdict::GpuModelTable>("gpu_peaks.json", dirs, t.warnings);
  t.prices = load_table<verdict::PriceTable>("prices.json", dirs, t.warnings);
  return t;
}

ReportTables load_report_tables(const std::string& data_dir) {
  std::error_code ec;
  if (!data_dir.empty() && !std::filesystem::is_directory(data_dir, ec)) {
    ReportTables t = load_report_tables(verdict::data_search_dirs({}));
    t.warnings.insert(t.warnings.begin(), "--data-dir " + data_dir + " is not a directory");
    return t;
  }
  return load_report_tables(verdict::data_search_dirs(data_dir));
}

Result<verdict::VerdictOptions> make_verdict_options(const ReportSettings& s,
                                                     const ReportTables& tables) {
  verdict::VerdictOptions o;
  if (!s.config_path.empty()) {
    auto config = diagnosis::load_diagnosis_config(s.config_path);
    if (!config) return config.error();
    o.diagnosis = std::move(*config);
  }
  if (s.price) {
    o.price_per_gpu_hour = s.price;
    o.price_source = "--price";
  } else if (o.diagnosis.price_per_gpu_hour) {
    o.price_per_gpu_hour = o.diagnosis.price_per_gpu_hour;
    o.price_source = "config " + s.config_path;
  }
  if (tables.models) {
    const auto& known = tables.models->dtypes();
    if (!known.empty() && std::find(known.begin(), known.end(), s.dtype) == known.end()) {
      std::string list;
      for (const auto& d : known) list += (list.empty() ? "" : ", ") + d;
      return Error{"--dtype " + s.dtype + " is not in the peak table (" + list + ")"};
    }
  }
  o.peak_tflops = s.peak_tflops;
  o.dtype = s.dtype;
  o.flops_per_step = s.flops_per_step;
  o.gpus = s.gpus;
  o.models = tables.models ? &*tables.models : nullptr;
  o.prices = tables.prices ? &*tables.prices : nullptr;
  return o;
}

std::optional<ReportFormat> report_format_from_name(const std::string& name) {
  if (name == "text") return ReportFormat::Text;
  if (name == "json") return ReportFormat::Json;
  if (name == "html") return ReportFormat::Html;
  return std::nullopt;
}

ReportFormat report_format_for_path(const std::string& path) {
  const auto ext = std::filesystem::path(path).extension().string();
  if (ext == ".html" || ext == ".htm") return ReportFormat::Html;
  if (ext == ".json") return ReportFormat::Json;
  return ReportFormat::Text;
}

Result<Recording> read_recording(const std::string& path, TraceReadOptions options) {
  kernels::RecordGatherer gatherer;
  bool any = false;
  options.kernel_record_sink = [&](const nlohmann::json& line) {
    any = true;
    gatherer.add(line);
  };
  auto trace = read_trace(path, options);
  if (!trace) return trace.error();
  Recording r{std::move(*trace), std::nullopt, std::nullopt};
  if (any) r.kernels = kernels::analyze_kernels(std::move(gatherer), r.trace);
  if (!r.trace.launch_records.empty()) {
    r.launches = kernels::sum_launch_records(r.trace.launch_records, r.trace);
  }
  return r;
}

std::optional<verdict::CollectiveEvidence> collective_evidence(const kernels::KernelView& view) {
  const auto finding = kernels::communication_finding(view);
  if (!finding) return std::nullopt;
  return verdict::CollectiveEvidence{kernels::collective_share(view.top), finding->fix};
}

verdict::LaunchEvidence launch_evidence(const kernels::LaunchCounts& counts) {
  verdict::LaunchEvidence e;
  if (counts.kernel_launches == 0) return e;
  std::map<std::string, std::uint64_t> by_label;
  for (const auto& k : counts.top) by_label[kernels::kernel_label(k.name)] += k.launches;
  for (const auto& [label, n] : by_label) {
    e.top.emplace_back(label, static_cast<double>(n) / static_cast<double>(counts.kernel_launches));
  }
  std::stable_sort(e.top.begin(), e.top.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  for (const auto& g : counts.gpus) e.per_second[g.gpu] = g.per_second;
  return e;
}

std::string render_report(const verdict::Verdict& v, const Trace& trace,
                          const std::optional<kernels::KernelView>& kernel_view,
                          const std::optional<kernels::LaunchCounts>& launches,
                          ReportFormat format) {
  // A recording of `gpulens run --kernels` adds "Where the GPU time went", one of
  // `gpulens run` "Kernel launches".
  switch (format) {
    case ReportFormat::Json: {
      auto j = render::verdict_to_json(v);
      if (kernel_view) j["kernels"] = render::kernels_to_json(*kernel_view);
      if (launches) j["launches"] = render::launches_to_json(*launches);
      // Invalid UTF-8 (a command line, a process name) is replaced, not fatal.
      return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    }
    case ReportFormat::Html: {
      std::string page = render::verdict_to_html(v, trace);
      if (kernel_view) page = render::insert_kernels_html(std::move(page), *kernel_view);
      if (launches) page = render::insert_launches_html(std::move(page), *launches);
      return page;
    }
    case ReportFormat::Text:
      break;
  }
  return render::verdict_to_text(v) +
         (kernel_view ? "\n" + render::kernels_to_text(*kernel_view) : "") +
         (launches ? "\n" + render::launches_to_text(*launches) : "");
}

Status write_report(const std::string& text, const std::string& path) {
  if (path == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
    return ok_status();
  }
  // A device or a pipe (/dev/null, /dev/stdout, a FIFO) is written in place:
  // renaming a file over it would replace it (as root, /dev/null itself).
  std::error_code status_ec;
  const auto kind = std::filesystem::status(path, status_ec).type();
  if (!status_ec && kind != std::filesystem::file_type::regular &&
      kind != std::filesystem::file_type::not_found) {
    std::ofstream out(path, std::ios::binary);
    if (!out) return Error{"cannot write " + path};
    out << text;
    if (!out.flush()) return Error{"cannot write " + path};
    return ok_status();
  }
  // A file is written whole or not at all: a reader never sees half a report.
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return Error{"cannot write " + path};
    out << text;
    if (!out.flush()) return Error{"cannot write " + path};
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) return Error{"cannot write " + path + ": " + ec.message()};
  return ok_status();
}

}  // namespace gpulens::cli
