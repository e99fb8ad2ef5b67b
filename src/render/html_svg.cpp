// SPDX-License-Identifier: Apache-2.0
#include "render/html_svg.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/text_safety.hpp"
#include "diagnosis/state_colour.hpp"

namespace gpulens::render::html {

std::string insert_before_script(std::string page, const std::string& section) {
  const auto at = page.rfind("<script>");
  if (at == std::string::npos) return page + section;
  page.insert(at, section);
  return page;
}

std::string escape(std::string_view raw) {
  const std::string text = terminal_safe_text(raw);
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string num(double x) {
  if (!std::isfinite(x)) return "0";
  const double r = std::round(x * 10) / 10;
  if (r == std::floor(r)) return fmt::format("{:.0f}", r);
  return fmt::format("{:.1f}", r);
}

std::string_view state_color(diagnosis::GpuState s) {
  return state_colour(s).hex;  // one table for every view (diagnosis/state_colour.cpp)
}

std::string clock_label(double seconds) {
  const long s = std::lround(std::max(0.0, seconds));
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return fmt::format("{}:{:02}", s / 60, s % 60);
  return fmt::format("{}:{:02}:{:02}", s / 3600, s % 3600 / 60, s % 60);
}

Series downsample(const Trace& trace, int gpu, double t0, double t1, std::size_t max_points) {
  Series s;
  s.gpu = gpu;
  s.t0 = t0;
  s.span = std::max(t1 - t0, 1e-9);
  if (const auto* d = trace.header.device(gpu)) {
    s.mem_total_mib = d->mem_total_mib;
    s.power_limit_w = d->power_limit_w;
  }
  const std::size_t n = std::max<std::size_t>(1, max_points);
  struct Acc {
    double t = 0;
    std::size_t count = 0;
    std::array<double, 6> sum{};
    std::array<std::size_t, 6> have{};
  };
  std::vector<Acc> buckets(n);
  constexpr std::array<Metric, 6> kMetrics = {Metric::GpuUtil,      Metric::SmActive,
                                              Metric::TensorActive, Metric::DramActive,
                                              Metric::MemUsedMib,   Metric::PowerW};
  for (const auto& sample : trace.samples) {
    if (sample.gpu != gpu || sample.t < t0 - 1e-9 || sample.t > t1 + 1e-9) continue;
    const double f = (sample.t - t0) / s.span;
    auto b = static_cast<std::size_t>(std::clamp(f, 0.0, 1.0) * static_cast<double>(n));
    Acc& a = buckets[std::min(b, n - 1)];
    a.t += sample.t - t0;
    ++a.count;
    for (std::size_t m = 0; m < kMetrics.size(); ++m) {
      if (const auto v = sample.get(kMetrics[m])) {
        a.sum[m] += *v;
        ++a.have[m];
      }
    }
  }
  std::array<std::vector<std::optional<double>>*, 6> out = {&s.util, &s.sm,      &s.tensor,
                                                            &s.dram, &s.mem_mib, &s.power_w};
  for (const auto& a : buckets) {
    if (a.count == 0) continue;
    s.t.push_back(a.t / static_cast<double>(a.count));
    for (std::size_t m = 0; m < kMetrics.size(); ++m) {
      out[m]->push_back(a.have[m] > 0
                            ? std::optional<double>(a.sum[m] / static_cast<double>(a.have[m]))
                            : std::nullopt);
    }
  }
  return s;
}

}  // namespace gpulens::render::html
