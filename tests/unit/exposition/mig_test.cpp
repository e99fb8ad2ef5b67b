// SPDX-License-Identifier: Apache-2.0
// MIG: each GPU instance's GPM readings (the sample's x_mig) as series of their
// own families with a gpu_instance label, never inside the whole-GPU families.
#include <gtest/gtest.h>

#include <string>

#include "exposition/exposition.hpp"
#include "server_support.hpp"

namespace gpulens::exposition {
namespace {

std::string rendered_with_mig(const nlohmann::json& x_mig) {
  auto snap = gpulens::testing::fixed_snapshot();
  snap.gpus[0].sample->extra["x_mig"] = x_mig;
  std::string out;
  render_gpu_metrics(out, snap);
  return out;
}

TEST(ExpositionMig, EachInstanceIsASeriesWithItsId) {
  const auto out = rendered_with_mig(nlohmann::json::parse(
      R"([{"gpu_instance": 1, "sm_active": 50, "dram_active": 10, "hmma_active": 20},
          {"gpu_instance": 2, "sm_active": 25}])"));
  const std::string gpu0 =
      R"(gpu="0",uuid="GPU-00000000",model="NVIDIA H100 80GB HBM3",hostname="node-17")";
  EXPECT_NE(out.find("# TYPE gpulens_mig_sm_active_ratio gauge"), std::string::npos) << out;
  EXPECT_NE(out.find("gpulens_mig_sm_active_ratio{" + gpu0 + ",gpu_instance=\"1\"} 0.5\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("gpulens_mig_sm_active_ratio{" + gpu0 + ",gpu_instance=\"2\"} 0.25\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("gpulens_mig_dram_active_ratio{" + gpu0 + ",gpu_instance=\"1\"} 0.1\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("gpulens_mig_tensor_pipe_active_ratio{" + gpu0 +
                     ",gpu_instance=\"1\",pipe=\"hmma\"} 0.2\n"),
            std::string::npos)
      << out;
  // Only what the instance measured: instance 2 has no DRAM series, not a 0.
  EXPECT_EQ(out.find("gpulens_mig_dram_active_ratio{" + gpu0 + ",gpu_instance=\"2\"}"),
            std::string::npos);
  // The whole-GPU family never carries an instance.
  EXPECT_EQ(out.find("gpulens_sm_active_ratio{" + gpu0 + ",gpu_instance"), std::string::npos);
  if (const auto check = gpulens::testing::promtool(out)) {
    EXPECT_EQ(check->first, 0) << check->second;
  }
}

TEST(ExpositionMig, MalformedInstancesAreSkipped) {
  const auto out = rendered_with_mig(nlohmann::json::parse(
      R"([{"sm_active": 50}, {"gpu_instance": "x", "sm_active": 5}, 7,
          {"gpu_instance": 3, "sm_active": "high"}])"));
  EXPECT_EQ(out.find("gpulens_mig_"), std::string::npos) << out;
  EXPECT_TRUE(rendered_with_mig(nlohmann::json::object()).find("gpulens_mig_") ==
              std::string::npos);
}

}  // namespace
}  // namespace gpulens::exposition
