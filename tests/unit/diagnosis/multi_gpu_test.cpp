// SPDX-License-Identifier: Apache-2.0
// Acceptance on live multi-GPU recordings (issue 16): calibration/multi_gpu/
// phases.py run under `gpulens run --interval 0.1` on several GPUs, committed in
// tests/fixtures/multi_gpu/<run>/ with each rank's own account of what it moved
// (ranks/rank<R>.json). Each run names its labels file (written before that run)
// in run.json. The same checks as calibration/multi_gpu/score.py: per phase and
// GPU the majority state, alerts that must and must not fire, the late rank
// named; NVLink and PCIe rates against the program's own timing. A row marked
// `known_miss` must still miss, so that a change is seen.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "core/gpm_interval.hpp"
#include "core/trace_reader.hpp"
#include "diagnosis/timeline.hpp"

namespace gpulens::diagnosis {
namespace {

namespace fs = std::filesystem;
const fs::path kRuns = fs::path(GPULENS_FIXTURES) / "multi_gpu";
const fs::path kLabels = fs::path(GPULENS_SOURCE_DIR) / "calibration" / "multi_gpu";
constexpr double kMultiGpuAlertGraceS = 10.0;  // as score.py

nlohmann::json read_json(const fs::path& p) {
  std::ifstream in(p);
  return nlohmann::json::parse(in);
}

struct LiveRun {
  Trace trace;
  DiagnosisReport report;
  std::vector<nlohmann::json> ranks;
  nlohmann::json labels;
};

const LiveRun& run_of(const std::string& name) {
  static std::map<std::string, LiveRun> cache;
  if (auto it = cache.find(name); it != cache.end()) return it->second;
  const fs::path dir = kRuns / name;
  LiveRun run;
  auto trace = read_trace((dir / "multi.trace.jsonl").string(), TraceReadOptions{.lenient = true});
  if (!trace) throw std::runtime_error(trace.error().message);
  run.trace = std::move(*trace);
  run.report = diagnose_trace(run.trace, DiagnosisConfig::defaults());
  for (int r = 0; fs::exists(dir / "ranks" / fmt::format("rank{}.json", r)); ++r) {
    run.ranks.push_back(read_json(dir / "ranks" / fmt::format("rank{}.json", r)));
  }
  run.labels = read_json(kLabels / read_json(dir / "run.json").at("labels").get<std::string>());
  return cache.emplace(name, std::move(run)).first->second;
}

std::vector<std::string> run_names() {
  std::vector<std::string> out;
  if (!fs::exists(kRuns)) return out;
  for (const auto& e : fs::directory_iterator(kRuns)) {
    if (e.is_directory()) out.push_back(e.path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<int> gpus_of(const std::string& which, int world) {
  std::vector<int> out;
  for (int g = 0; g < world; ++g) {
    const bool in = which == "all" || (which == "last" && g == world - 1) ||
                    (which == "others" && g != world - 1) || (which == "rank0" && g == 0) ||
                    (which == "not_rank0" && g != 0);
    if (in) out.push_back(g);
  }
  return out;
}

// What differs from one label row on one GPU, in words; empty when right.
std::vector<std::string> problems(const LiveRun& run, const nlohmann::json& row, int gpu,
                                  int world) {
  const std::string name = row.at("phase").get<std::string>();
  const PhaseSummary* phase = nullptr;
  for (const auto& p : run.report.phases) {
    if (p.name == name && p.gpu == gpu) phase = &p;
  }
  if (phase == nullptr) return {"phase not found"};
  std::vector<std::string> out;
  std::vector<std::string> states = row.value("state_any", std::vector<std::string>{});
  if (states.empty()) states.push_back(row.at("state").get<std::string>());
  const std::string got(state_id(phase->state));
  if (std::find(states.begin(), states.end(), got) == states.end()) out.push_back("state " + got);
  const auto fired = [&](const std::string& rule) {
    return std::any_of(run.report.alerts.begin(), run.report.alerts.end(), [&](const auto& a) {
      return a.rule == rule && a.gpu == gpu && a.fired_at >= phase->start &&
             a.fired_at <= phase->end + kMultiGpuAlertGraceS;
    });
  };
  for (const auto& rule : row.value("alerts", std::vector<std::string>{})) {
    if (!fired(rule)) out.push_back(rule + " did not fire");
  }
  for (const auto& rule : row.value("not_alerts", std::vector<std::string>{})) {
    if (fired(rule)) out.push_back(rule + " fired");
  }
  const std::string first = phase->fixes.empty() ? std::string() : phase->fixes.front();
  const auto fix_words = row.value("fix", std::vector<std::string>{});
  if (!fix_words.empty() &&
      std::none_of(fix_words.begin(), fix_words.end(),
                   [&](const std::string& w) { return first.find(w) != std::string::npos; })) {
    out.push_back("first fix: " + (first.empty() ? std::string("(none)") : first));
  }
  for (const auto& w : row.value("fix_not", std::vector<std::string>{})) {
    if (first.find(w) != std::string::npos) out.push_back("first fix says \"" + w + "\"");
  }
  if (row.value("names_late_rank", false)) {
    const std::string late = fmt::format("GPU {}", world - 1);
    bool named = std::any_of(phase->fixes.begin(), phase->fixes.end(),
                             [&](const auto& f) { return f.find(late) != std::string::npos; });
    for (const auto& a : run.report.alerts) {
      named = named || (a.gpu == gpu && a.message.find(late) != std::string::npos);
    }
    if (!named) out.push_back(late + " not named");
  }
  return out;
}

TEST(MultiGpuLive, EveryPhaseOnEveryGpuAsLabelled) {
  const auto runs = run_names();
  ASSERT_FALSE(runs.empty()) << "no recording under " << kRuns;
  for (const auto& name : runs) {
    const LiveRun& run = run_of(name);
    const int world = static_cast<int>(run.ranks.size());
    ASSERT_GE(world, 2) << name << ": fewer than 2 rank files";
    ASSERT_EQ(run.trace.header.devices.size(), static_cast<std::size_t>(world)) << name;
    for (const auto& row : run.labels.at("phases")) {
      const std::string known = row.value("known_miss", std::string());
      for (int gpu : gpus_of(row.at("gpus").get<std::string>(), world)) {
        const auto found = problems(run, row, gpu, world);
        std::string text;
        for (const auto& p : found) text += p + "; ";
        const std::string where =
            fmt::format("{} {} GPU {}", name, row.at("phase").get<std::string>(), gpu);
        if (known.empty()) {
          EXPECT_TRUE(found.empty()) << where << ": " << text;
        } else {
          EXPECT_FALSE(found.empty())
              << where << " is right now: remove its known_miss (" << known << ")";
        }
      }
    }
  }
}

// gpulens' mean rate over a phase (its first and last second left out, empty
// GPM intervals dropped as the analysis drops them) against the rank's own
// bytes per second.
TEST(MultiGpuLive, LinkRatesMatchWhatTheProgramMoved) {
  for (const auto& name : run_names()) {
    const LiveRun& run = run_of(name);
    const auto& checks = run.labels.at("checks");
    struct Check {
      const char* phase;
      Metric metric;
      const char* rank_field;
      double within;
    };
    const Check list[] = {{"allreduce", Metric::NvlinkTxMibs, "sent_bytes_per_s",
                           checks.at("nvlink_tx_within").get<double>()},
                          {"h2d_pinned", Metric::PcieRxMibs, "rx_bytes_per_s",
                           checks.at("pcie_rx_within").get<double>()}};
    for (const Check& c : list) {
      std::optional<double> start, end;
      for (const auto& m : run.trace.marks) {
        if (m.name == std::string(c.phase) + ":start") start = m.t;
        if (m.name == std::string(c.phase) + ":end") end = m.t;
      }
      if (!start || !end) continue;  // a plan without this phase
      for (std::size_t gpu = 0; gpu < run.ranks.size(); ++gpu) {
        const double program = run.ranks[gpu].at(c.phase).at(c.rank_field).get<double>();
        double sum = 0;
        int n = 0;
        for (const auto& s : run.trace.samples) {
          if (s.gpu != static_cast<int>(gpu) || s.t < *start + 1 || s.t > *end - 1) continue;
          if (gpm_interval_empty(s)) continue;
          if (auto v = s.get(c.metric)) sum += *v, ++n;
        }
        ASSERT_GT(n, 0) << name << " " << c.phase << " GPU " << gpu;
        const double ours = sum / n * 1048576.0;
        EXPECT_NEAR(ours / program, 1.0, c.within)
            << name << " " << c.phase << " GPU " << gpu << ": gpulens " << ours / 1e9
            << " GB/s, program " << program / 1e9 << " GB/s";
      }
    }
  }
}

}  // namespace
}  // namespace gpulens::diagnosis
