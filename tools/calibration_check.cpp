// SPDX-License-Identifier: Apache-2.0
// Checks a calibration recording (calibration/gpulens-workload under `gpulens record`)
// against what each phase's known workload must read, and against the SM activity
// that `nvidia-smi dmon --gpm-metrics 2 -o DT` printed over the same phases (dmon
// titles GPM metric 2 "smutil", not to be confused with its classic "sm" column).
//
//   calibration_check TRACE [--dmon DMON_OUTPUT] [--gpu N]
//
// Prints one table row per check and exits 1 if any check fails.
#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "core/phase.hpp"
#include "core/trace_reader.hpp"

namespace {

using gpulens::Metric;

struct Check {
  std::string phase;
  Metric metric;
  std::string expectation;
  std::function<bool(double)> pass;
};

std::vector<Check> checks() {
  const auto at_least = [](double lo) { return [lo](double v) { return v >= lo; }; };
  const auto at_most = [](double hi) { return [hi](double v) { return v <= hi; }; };
  const auto within = [](double c, double tol) {
    return [c, tol](double v) { return std::fabs(v - c) <= tol; };
  };
  return {
      {"idle", Metric::GpuUtil, "<= 1", at_most(1)},
      {"idle", Metric::SmActive, "<= 0.5", at_most(0.5)},
      {"one_sm", Metric::GpuUtil, ">= 95", at_least(95)},
      {"one_sm", Metric::SmActive, "0.76 +- 0.3", within(0.76, 0.3)},
      {"quarter_sm", Metric::SmActive, "25 +- 2", within(25, 2)},
      {"half_sm", Metric::SmActive, "50 +- 2", within(50, 2)},
      {"all_sm", Metric::SmActive, "100 +- 2", within(100, 2)},
      {"gemm_bf16", Metric::TensorActive, ">= 70", at_least(70)},
      {"copy_d2d", Metric::DramActive, ">= 75", at_least(75)},
      {"h2d_pcie", Metric::PcieRxMibs, ">= 20000", at_least(20000)},
      {"h2d_pcie", Metric::SmActive, "<= 2", at_most(2)},
      {"duty50_gemm", Metric::GpuUtil, "35..65", [](double v) { return v >= 35 && v <= 65; }},
      {"tiny_kernels", Metric::SmActive, "<= 5", at_most(5)},
      {"tiny_kernels", Metric::GpuUtil, ">= 5", at_least(5)},
      {"host_bound", Metric::GpuUtil, "<= 40", at_most(40)},
  };
}

// dmon lines "YYYYMMDD HH:MM:SS gpu v1 v2 ..." with a "#Date Time gpu name..." header.
struct DmonSeries {
  std::vector<double> t;
  std::vector<double> value;
};

DmonSeries parse_dmon(const std::string& path, int gpu, const std::string& column) {
  DmonSeries series;
  std::ifstream in(path);
  std::vector<std::string> names;
  int col = -1;
  for (std::string line; std::getline(in, line);) {
    std::istringstream ss(line);
    std::vector<std::string> f;
    for (std::string w; ss >> w;) f.push_back(w);
    if (f.empty()) continue;
    if (f[0] == "#" && f.size() > 1) f.erase(f.begin()), f[0] = "#" + f[0];
    if (f[0].rfind("#Date", 0) == 0) {
      names.assign(f.begin(), f.end());
      names[0] = "Date";
      col = -1;
      // dmon's column titles vary between driver versions: match loosely
      // ("SMACT", "smAct", "sm_act"), ignoring case and punctuation.
      const auto norm = [](std::string s) {
        std::string n;
        for (const char c : s) {
          if (std::isalnum(static_cast<unsigned char>(c)) != 0) {
            n += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
          }
        }
        return n;
      };
      for (std::size_t i = 3; i < names.size(); ++i) {
        if (norm(names[i]) == norm(column)) col = static_cast<int>(i);
      }
      if (col >= 0)
        std::fprintf(stderr, "calibration_check: dmon column '%s'\n", names[col].c_str());
      else
        std::fprintf(stderr, "calibration_check: no dmon column like '%s' in: %s\n", column.c_str(),
                     line.c_str());
      continue;
    }
    if (f[0][0] == '#' || col < 0 || f.size() <= static_cast<std::size_t>(col)) continue;
    if (std::atoi(f[2].c_str()) != gpu) continue;
    std::tm tm{};
    if (strptime((f[0] + " " + f[1]).c_str(), "%Y%m%d %H:%M:%S", &tm) == nullptr) continue;
    char* end = nullptr;
    const double v = std::strtod(f[static_cast<std::size_t>(col)].c_str(), &end);
    if (end == f[static_cast<std::size_t>(col)].c_str()) continue;  // "-"
    series.t.push_back(static_cast<double>(timegm(&tm)));
    series.value.push_back(v);
  }
  return series;
}

}  // namespace

int main(int argc, char** argv) {
  std::string trace_path, dmon_path, dmon_column = "smutil";
  int gpu = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--dmon" && i + 1 < argc)
      dmon_path = argv[++i];
    else if (a == "--dmon-column" && i + 1 < argc)
      dmon_column = argv[++i];
    else if (a == "--gpu" && i + 1 < argc)
      gpu = std::atoi(argv[++i]);
    else if (a == "-h" || a == "--help") {
      std::puts("usage: calibration_check TRACE [--dmon FILE] [--dmon-column NAME] [--gpu N]");
      return 0;
    } else
      trace_path = a;
  }
  auto trace = gpulens::read_trace(trace_path);
  if (!trace) {
    std::fprintf(stderr, "calibration_check: %s\n", trace.error().message.c_str());
    return 2;
  }
  const double end_t = trace->samples.empty() ? 0 : trace->samples.back().t;
  std::map<std::string, gpulens::Phase> phases;
  for (const auto& p : gpulens::find_phases(trace->marks, end_t)) phases[p.name] = p;
  DmonSeries dmon;
  if (!dmon_path.empty()) dmon = parse_dmon(dmon_path, gpu, dmon_column);

  int failures = 0;
  fmt::print("{:<13} {:<14} {:<12} {:>10} {:>8}  {}\n", "phase", "metric", "expected", "gpulens",
             "dmon", "result");
  const auto row = [&](const std::string& phase, std::string_view metric, const std::string& exp,
                       std::optional<double> v, std::optional<double> d, bool ok) {
    fmt::print("{:<13} {:<14} {:<12} {:>10} {:>8}  {}\n", phase, metric, exp,
               v ? fmt::format("{:.2f}", *v) : "-", d ? fmt::format("{:.2f}", *d) : "-",
               ok ? "PASS" : "FAIL");
    if (!ok) ++failures;
  };
  for (const auto& c : checks()) {
    const auto it = phases.find(c.phase);
    if (it == phases.end()) {
      row(c.phase, gpulens::metric_info(c.metric).key, c.expectation, {}, {}, false);
      continue;
    }
    // Leave out the phase's first second and last 0.2 s, as the reference does.
    const auto v = gpulens::mean_over(trace->samples, gpu, c.metric, it->second.start + 1.0,
                                      it->second.end - 0.2);
    row(c.phase, gpulens::metric_info(c.metric).key, c.expectation, v, {}, v && c.pass(*v));
  }
  if (!dmon.t.empty()) {
    // SM activity against the peer over each phase: within 1 point. dmon prints whole
    // seconds, so compare the same whole-second windows.
    for (const auto& [name, p] : phases) {
      const double from = std::ceil(p.start + 1.0), to = std::floor(p.end - 0.2);
      double sum = 0;
      int n = 0;
      for (std::size_t i = 0; i < dmon.t.size(); ++i) {
        if (dmon.t[i] >= from + 1 && dmon.t[i] <= to) {
          sum += dmon.value[i];
          ++n;
        }
      }
      const auto ours = gpulens::mean_over(trace->samples, gpu, Metric::SmActive, from, to);
      if (n == 0 || !ours) {
        row(name, "sm_active~dmon", "+- 1", ours, {}, false);
        continue;
      }
      row(name, "sm_active~dmon", "+- 1", ours, sum / n, std::fabs(*ours - sum / n) <= 1.0);
    }
  }
  fmt::print("{} checks failed\n", failures);
  return failures == 0 ? 0 : 1;
}
