// SPDX-License-Identifier: Apache-2.0
#include "render/stream_format.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <string_view>

#include "core/clock_reasons.hpp"
#include "core/json_format.hpp"

namespace gpulens::render {
namespace {

// name, title, unit, width, priority. The order is the display order.
const std::vector<StreamColumn> kColumns{
    {"time", "time", "hh:mm:ss", 8, 1},
    {"gpu", "gpu", "#", 3, 0},
    {"util", "util", "%", 5, 0},
    {"sm", "sm_act", "%", 6, 0},
    {"occ", "occ", "%", 5, 3},
    {"tensor", "tensor", "%", 6, 2},
    {"dram", "dram", "%", 5, 2},
    {"pcie", "pcie_rx/tx", "MiB/s", 11, 4},
    {"nvlink", "nvl_rx/tx", "MiB/s", 13, 5},
    {"power", "power", "W", 5, 3},
    {"temp", "temp", "C", 4, 6},
    {"clock", "smclk", "MHz why", 11, 4},
    {"mem", "mem_used", "MiB", 8, 3},
    {"hmma", "hmma", "%", 5, 8},
    {"imma", "imma", "%", 5, 8},
    {"dfma", "dfma", "%", 5, 8},
    {"fp64", "fp64", "%", 5, 8},
    {"fp32", "fp32", "%", 5, 8},
    {"fp16", "fp16", "%", 5, 8},
    {"int", "int", "%", 5, 8},
    {"memutil", "memutil", "%", 7, 7},
    {"memtemp", "hbm", "C", 4, 7},
    {"pstate", "pst", "P", 3, 8},
    {"host", "host_cpu", "%", 8, 7},
    {"state", "state", "diagnosis", 18, 1},
};

const std::vector<std::string> kDefault{"time",   "gpu",   "util", "sm",     "occ",
                                        "tensor", "dram",  "pcie", "nvlink", "power",
                                        "temp",   "clock", "mem",  "state"};

}  // namespace

const std::vector<StreamColumn>& stream_columns() {
  return kColumns;
}
std::vector<std::string> default_stream_columns() {
  return kDefault;
}

Result<StreamFormatter> StreamFormatter::create(StreamFormatOptions options,
                                                const TraceHeader& header) {
  StreamFormatter f;
  if (options.columns.empty()) options.columns = kDefault;
  for (const auto& name : options.columns) {
    const auto it = std::find_if(kColumns.begin(), kColumns.end(),
                                 [&](const StreamColumn& c) { return c.name == name; });
    if (it == kColumns.end()) {
      std::string known;
      for (const auto& c : kColumns) known += (known.empty() ? "" : ", ") + c.name;
      return Error{fmt::format("unknown column '{}' (columns: {})", name, known)};
    }
    f.shown_.push_back(&*it);
  }
  // Keep display order stable whatever order the user listed them in.
  std::sort(f.shown_.begin(), f.shown_.end(),
            [](const StreamColumn* a, const StreamColumn* b) { return a < b; });
  f.shown_.erase(std::unique(f.shown_.begin(), f.shown_.end()), f.shown_.end());
  if (options.format == StreamFormat::Table && options.max_width > 0) {
    const auto width = [&] {
      int w = 0;
      for (const auto* c : f.shown_) w += c->width + 1;
      return w;
    };
    while (width() > options.max_width && f.shown_.size() > 1) {
      // Drop the least important column (highest priority number, rightmost first).
      auto victim = std::max_element(
          f.shown_.rbegin(), f.shown_.rend(),
          [](const StreamColumn* a, const StreamColumn* b) { return a->priority < b->priority; });
      if ((*victim)->priority == 0) break;
      f.shown_.erase(std::next(victim).base());
    }
  }
  f.options_ = std::move(options);
  f.header_ = header;
  // Sub-second intervals show tenths so that ticks are told apart.
  f.tenths_ = header.interval_s && *header.interval_s < 1.0;
  return f;
}

int StreamFormatter::width(const StreamColumn& c) const {
  return c.name == "time" && tenths_ ? c.width + 2 : c.width;
}

HeaderRepeat::HeaderRepeat(int rows, int header_lines) {
  const int usable = (rows > 0 ? rows : 24) - header_lines;
  screen_ = static_cast<std::size_t>(std::max(usable, 1));
}

bool HeaderRepeat::due(std::size_t tick_lines) {
  // A tick's lines stay together: the header goes before a tick that would not
  // fit under the last one on the same screen.
  if (since_header_ > 0 && since_header_ + tick_lines > screen_) {
    since_header_ = tick_lines;
    return true;
  }
  since_header_ += tick_lines;
  return false;
}

std::string StreamFormatter::header_text() const {
  switch (options_.format) {
    case StreamFormat::Json:
      return {};
    case StreamFormat::Csv: {
      std::string line = "t,gpu";
      for (const auto& info : all_metrics()) {
        line += ',';
        line += info.key;
      }
      line += ",state,alerts\n";
      return line;
    }
    case StreamFormat::Table:
      break;
  }
  std::string titles = "#", units = "#";
  for (const auto* c : shown_) {
    const int w = width(*c) - (c == shown_.front() ? 1 : 0);
    const bool left = c->name == "state";
    titles += left ? fmt::format("{:<{}} ", c->title, w) : fmt::format("{:>{}} ", c->title, w);
    const std::string unit = c->name == "time" && tenths_ ? "hh:mm:ss.s" : c->unit;
    units += left ? fmt::format("{:<{}} ", unit, w) : fmt::format("{:>{}} ", unit, w);
  }
  while (!titles.empty() && titles.back() == ' ') titles.pop_back();
  while (!units.empty() && units.back() == ' ') units.pop_back();
  return titles + "\n" + units + "\n";
}

namespace {

// The columns that show one metric as a number, and the decimals each keeps.
struct OneMetricCell {
  std::string_view column;
  Metric metric;
  int decimals;
};
constexpr OneMetricCell kOneMetricCells[] = {
    {"util", Metric::GpuUtil, 0},    {"sm", Metric::SmActive, 1},
    {"occ", Metric::SmOccupancy, 1}, {"tensor", Metric::TensorActive, 1},
    {"dram", Metric::DramActive, 1}, {"power", Metric::PowerW, 0},
    {"temp", Metric::TempC, 0},      {"memtemp", Metric::MemTempC, 0},
    {"mem", Metric::MemUsedMib, 0},  {"memutil", Metric::MemUtil, 0},
    {"pstate", Metric::Pstate, 0},   {"host", Metric::HostCpuPct, 1},
    {"hmma", Metric::HmmaActive, 1}, {"imma", Metric::ImmaActive, 1},
    {"dfma", Metric::DfmaActive, 1}, {"fp64", Metric::Fp64Active, 1},
    {"fp32", Metric::Fp32Active, 1}, {"fp16", Metric::Fp16Active, 1},
    {"int", Metric::IntActive, 1},
};

}  // namespace

std::string StreamFormatter::cell(const StreamColumn& c, const Sample& s,
                                  const StreamAnnotation* note) const {
  const DeviceInfo* device = header_.device(s.gpu);
  // "n/a" when the device said it cannot give the metric; "-" when it was not measured.
  const auto metric = [&](Metric m, int decimals) -> std::string {
    if (const auto v = s.values.get(m)) return fmt::format("{:.{}f}", *v, decimals);
    if (device != nullptr && device->unsupported_reason(m) != nullptr) return "n/a";
    return "-";
  };
  const auto pair = [&](Metric a, Metric b) { return metric(a, 0) + "/" + metric(b, 0); };
  if (c.name == "time") {
    const auto secs = static_cast<std::time_t>(std::floor(s.t));
    std::tm tm{};
    if (options_.utc)
      gmtime_r(&secs, &tm);
    else
      localtime_r(&secs, &tm);
    if (tenths_) {
      const int tenths = static_cast<int>(std::floor((s.t - std::floor(s.t)) * 10.0));
      return fmt::format("{:02}:{:02}:{:02}.{}", tm.tm_hour, tm.tm_min, tm.tm_sec, tenths);
    }
    return fmt::format("{:02}:{:02}:{:02}", tm.tm_hour, tm.tm_min, tm.tm_sec);
  }
  if (c.name == "gpu") return std::to_string(s.gpu);
  for (const auto& one : kOneMetricCells) {
    if (c.name == one.column) return metric(one.metric, one.decimals);
  }
  if (c.name == "pcie") return pair(Metric::PcieRxMibs, Metric::PcieTxMibs);
  if (c.name == "nvlink") return pair(Metric::NvlinkRxMibs, Metric::NvlinkTxMibs);
  if (c.name == "clock") {
    std::string text = metric(Metric::SmClockMhz, 0);
    if (const auto r = s.values.get(Metric::ClockEventReasons)) {
      const auto label = clock_reason_short(static_cast<std::uint64_t>(*r));
      if (!label.empty()) text += " " + label;
    }
    return text;
  }
  if (c.name == "state") {
    if (s.extra.contains("x_error")) return "no-answer";
    if (note == nullptr || note->state.empty()) return "-";
    std::string text = note->state;
    if (!note->alerts.empty()) text += "!";
    return text;
  }
  return "?";
}

std::string StreamFormatter::format(const Sample& s, const StreamAnnotation* note) const {
  std::string line;
  switch (options_.format) {
    case StreamFormat::Json: {
      append_sample_json(line, s);
      if (note != nullptr && !note->state.empty()) {
        line.pop_back();  // reopen the object to add the diagnosis
        line += ", \"state\": ";
        append_json_string(line, note->state);
        line += ", \"alerts\": [";
        for (std::size_t i = 0; i < note->alerts.size(); ++i) {
          if (i > 0) line += ", ";
          append_json_string(line, note->alerts[i]);
        }
        line += "]}";
      }
      line += '\n';
      return line;
    }
    case StreamFormat::Csv: {
      line = fmt::format("{:.3f},{}", s.t, s.gpu);
      for (const auto& info : all_metrics()) {
        line += ',';
        if (const auto v = s.values.get(info.id)) append_number(line, *v);
      }
      line += ',';
      if (note != nullptr) {
        line += note->state;
        line += ',';
        for (std::size_t i = 0; i < note->alerts.size(); ++i) {
          if (i > 0) line += ';';
          line += note->alerts[i];
        }
      } else {
        line += ',';
      }
      line += '\n';
      return line;
    }
    case StreamFormat::Table:
      break;
  }
  line += ' ';
  for (const auto* c : shown_) {
    const int w = width(*c) - (c == shown_.front() ? 1 : 0);
    if (c->name == "state") {
      line += fmt::format("{:<{}} ", cell(*c, s, note), w);
    } else {
      line += fmt::format("{:>{}} ", cell(*c, s, note), w);
    }
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  line += '\n';
  return line;
}

}  // namespace gpulens::render
