// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <string>

#include "exposition/api_json.hpp"
#include "exposition/exposition.hpp"
#include "server_support.hpp"

namespace gpulens::exposition {
namespace {

// /api/v1/health and the self-metrics say where the GPUs without GPM get their profiling counters
// and, when it cannot read them, why (docs/dcgm.md).
TEST(ProfilerHealth, SaysDcgmsStateAndWhy) {
  auto snap = gpulens::testing::fixed_snapshot();
  snap.source.live = true;
  sources::SamplerStats stats;
  sources::ProfilerStatus dcgm;
  dcgm.source = "dcgm";
  dcgm.state = "reconnecting";
  dcgm.detail = "the host engine stopped answering (DCGM_ST_CONNECTION_NOT_VALID)";
  dcgm.address = "localhost:5555";
  dcgm.gpus = {0, 1};
  dcgm.notes = {"GPU 2 (GPU-x) is not among the host engine's GPUs"};
  dcgm.sessions = 2;
  dcgm.lost = 1;
  dcgm.blank_values = 4;
  dcgm.stale_values = 3;
  stats.profiler = dcgm;
  snap.source.sampler = stats;
  const auto health = health_json(snap, std::nullopt, snap.t);
  const auto& p = health["source"]["profiler"];
  EXPECT_EQ(p["source"], "dcgm") << health.dump(2);
  EXPECT_EQ(p["state"], "reconnecting");
  EXPECT_EQ(p["detail"], dcgm.detail);
  EXPECT_EQ(p["address"], "localhost:5555");
  EXPECT_EQ(p["gpus"].size(), 2u);
  EXPECT_EQ(p["notes"][0], dcgm.notes[0]);
  EXPECT_EQ(p["sessions"], 2);
  EXPECT_EQ(p["lost"], 1);
  EXPECT_EQ(p["blank_values"], 4);
  EXPECT_EQ(p["stale_values"], 3);

  std::string text;
  render_self_metrics(text, snap, SelfStats{});
  EXPECT_NE(text.find("# TYPE gpulens_profiler_watching gauge\n"
                      "gpulens_profiler_watching{source=\"dcgm\"} 0\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("gpulens_profiler_sessions_lost_total{source=\"dcgm\"} 1\n"),
            std::string::npos);
  EXPECT_NE(
      text.find("gpulens_profiler_values_dropped_total{source=\"dcgm\",reason=\"blank\"} 4\n"),
      std::string::npos);
  EXPECT_NE(
      text.find("gpulens_profiler_values_dropped_total{source=\"dcgm\",reason=\"stale\"} 3\n"),
      std::string::npos);

  // Where every GPU has GPM (or --dcgm off) there is no such object, nor series.
  snap.source.sampler = sources::SamplerStats{};
  EXPECT_FALSE(health_json(snap, std::nullopt, snap.t)["source"].contains("profiler"));
  text.clear();
  render_self_metrics(text, snap, SelfStats{});
  EXPECT_EQ(text.find("gpulens_profiler_"), std::string::npos);
}

}  // namespace
}  // namespace gpulens::exposition
