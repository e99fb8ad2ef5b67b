// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <string>

#include "exposition/api_json.hpp"
#include "server_support.hpp"

namespace gpulens::exposition {
namespace {

// /api/v1/health says where the GPUs without GPM get their profiling counters and,
// when it cannot read them, why (docs/dcgm.md).
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

  // Where every GPU has GPM (or --dcgm off) there is no such object.
  snap.source.sampler = sources::SamplerStats{};
  EXPECT_FALSE(health_json(snap, std::nullopt, snap.t)["source"].contains("profiler"));
}

}  // namespace
}  // namespace gpulens::exposition
