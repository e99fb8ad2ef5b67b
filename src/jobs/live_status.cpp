// SPDX-License-Identifier: Apache-2.0
#include "jobs/live_status.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/text_units.hpp"
#include "verdict/mfu.hpp"

namespace gpulens::jobs {
namespace {

std::string elapsed_text(double s) {
  const long t = std::lround(std::max(0.0, s));
  if (t < 3600) return fmt::format("{}:{:02}", t / 60, t % 60);
  return fmt::format("{}:{:02}:{:02}", t / 3600, t % 3600 / 60, t % 60);
}

}  // namespace

LiveStatus::LiveStatus(const TraceHeader& header, std::optional<double> peak_total_tflops)
    : engine_(header, diagnosis::DiagnosisConfig::defaults()),
      peak_total_tflops_(peak_total_tflops) {}

void LiveStatus::on_tick(const Tick& tick) {
  if (!start_) {
    start_ = tick.t;
    period_start_ = tick.t;
  }
  engine_.on_tick(tick);
  for (const auto& s : tick.samples) {
    Means& m = means_[s.gpu];
    m.n += 1;
    for (Metric k : {Metric::GpuUtil, Metric::SmActive, Metric::TensorActive, Metric::PowerW,
                     Metric::MemUsedMib}) {
      if (const auto v = s.get(k)) {
        auto& [sum, count] = m.sum[k];
        sum += *v;
        count += 1;
      }
    }
  }
  for (const auto& mark : tick.marks) on_mark(mark);
}

void LiveStatus::on_mark(const Mark& mark) {
  if (mark.name != verdict::kStepMark) return;
  const auto it = mark.fields.find("flops");
  if (it != mark.fields.end() && it->is_number()) step_flops_ += it->get<double>();
  const auto n = mark.fields.find("steps");
  steps_ += n != mark.fields.end() && n->is_number_integer() ? n->get<long>() : 1;
}

std::string LiveStatus::take_line(double now, const std::vector<int>& gpus) {
  std::string line = "gpulens " + elapsed_text(now - start_.value_or(now));
  std::vector<int> which = gpus;
  if (which.empty()) {
    for (const auto& [g, _] : means_) which.push_back(g);
  }
  const auto mean = [&](int g, Metric k) -> std::optional<double> {
    const auto it = means_.find(g);
    if (it == means_.end()) return std::nullopt;
    const auto s = it->second.sum.find(k);
    if (s == it->second.sum.end() || s->second.second <= 0) return std::nullopt;
    return s->second.first / s->second.second;
  };
  const auto pct = [](const char* label, std::optional<double> v) {
    return v ? fmt::format(" {} {}", label, points_compact(*v)) : std::string();
  };
  if (which.empty()) line += " | no samples yet";
  // Beyond four GPUs one line cannot hold them all: show the first four.
  for (std::size_t i = 0; i < which.size() && i < 4; ++i) {
    const int g = which[i];
    line += fmt::format(" | GPU{} {}", g, engine_.brief(g).state);
    line += pct("util", mean(g, Metric::GpuUtil));
    line += pct("SM", mean(g, Metric::SmActive));
    line += pct("tensor", mean(g, Metric::TensorActive));
    if (const auto p = mean(g, Metric::PowerW)) line += fmt::format(" {:.0f}W", *p);
  }
  if (which.size() > 4) line += fmt::format(" | +{} GPUs", which.size() - 4);
  const double period = now - period_start_;
  if (steps_ > 0 && period > 0) {
    line += fmt::format(" | {} steps", steps_);
    if (step_flops_ > 0) {
      const double tflops = step_flops_ / period / 1e12;
      line += fmt::format(" {:.1f} TFLOP/s", tflops);
      if (peak_total_tflops_ && *peak_total_tflops_ > 0) {
        line += " MFU " + points_compact(tflops / *peak_total_tflops_ * 100);
      }
    }
  }
  means_.clear();
  step_flops_ = 0;
  steps_ = 0;
  period_start_ = now;
  return line;
}

}  // namespace gpulens::jobs
