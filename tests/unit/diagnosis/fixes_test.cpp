// SPDX-License-Identifier: Apache-2.0
// The words of fixes.cpp: the throttle's description and fixes, the price
// text, the fixes of each built-in alert rule and the host-staged copies fix.
#include "diagnosis/fixes.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/clock_reasons.hpp"
#include "diagnosis_support.hpp"

namespace gpulens::diagnosis {
namespace {

bool fixes_mention(const std::vector<std::string>& fixes, const std::string& word) {
  for (const auto& f : fixes) {
    if (f.find(word) != std::string::npos) return true;
  }
  return false;
}

ThrottleFinding throttle_of(std::uint64_t reasons, std::string cause) {
  ThrottleFinding t;
  t.throttled = true;
  t.reasons = reasons;
  t.cause = std::move(cause);
  return t;
}

TEST(Fixes, ThrottleDescriptionNamesWhatWasMeasured) {
  auto t = throttle_of(clock_reason::kSwPowerCap, "power cap (software)");
  EXPECT_EQ(describe_throttle(t), "power cap (software)");
  t.sm_clock_mhz = 1365;
  t.max_sm_clock_mhz = 1980;
  t.power_w = 697;
  t.power_limit_w = 700;
  t.temp_c = 81;
  EXPECT_EQ(describe_throttle(t),
            "power cap (software): SM clock 1365 of 1980 MHz, 697 of 700 W, 81 C");
  t.throttled = false;
  EXPECT_EQ(describe_throttle(t), "");
}

TEST(Fixes, ThrottleFixesFollowItsReasons) {
  EXPECT_TRUE(fixes_for_throttle(ThrottleFinding{}).empty());
  const auto thermal = fixes_for_throttle(throttle_of(clock_reason::kHwThermal, "thermal"));
  ASSERT_EQ(thermal.size(), 1U);
  EXPECT_TRUE(fixes_mention(thermal, "Cool the GPU"));
  const auto power = fixes_for_throttle(throttle_of(clock_reason::kSwPowerCap, "power cap"));
  ASSERT_EQ(power.size(), 1U);
  EXPECT_TRUE(fixes_mention(power, "power limit"));
  const auto brake = fixes_for_throttle(throttle_of(clock_reason::kHwPowerBrake, "brake"));
  ASSERT_EQ(brake.size(), 2U);
  EXPECT_TRUE(fixes_mention(brake, "power supply"));
}

TEST(Fixes, PricePerHourOnlyWhenKnownAndPositive) {
  FixContext ctx;
  EXPECT_EQ(cost_per_hour_text(ctx), "");
  ctx.price_per_gpu_hour = 0;
  EXPECT_EQ(cost_per_hour_text(ctx), "");
  ctx.price_per_gpu_hour = 2.489;
  EXPECT_EQ(cost_per_hour_text(ctx), "$2.49 per hour");
  ctx.currency = "EUR ";
  EXPECT_EQ(cost_per_hour_text(ctx), "EUR 2.49 per hour");
}

TEST(Fixes, EveryBuiltInRuleButTheStatesOwnHasItsFixes) {
  const StateFinding finding;
  const WindowStats window;
  const HardwareLimits hw = hardware_limits(testing::h100());
  const FixContext ctx;
  for (const char* rule : {"stalled", "memory_growth", "gpu_imbalance", "xid_error", "gpu_lost"}) {
    EXPECT_FALSE(fixes_for_alert(rule, finding, window, hw, ctx).empty()) << rule;
  }
  EXPECT_TRUE(fixes_mention(fixes_for_alert("stalled", finding, window, hw, ctx), "py-spy"));
  EXPECT_TRUE(fixes_mention(fixes_for_alert("xid_error", finding, window, hw, ctx), "dmesg"));
  EXPECT_TRUE(fixes_for_alert("my_custom_rule", finding, window, hw, ctx).empty());
}

TEST(Fixes, StateRulesGiveTheStatesFixes) {
  StateFinding finding;
  finding.state = GpuState::Idle;
  const WindowStats window;
  const HardwareLimits hw = hardware_limits(testing::h100());
  const FixContext ctx;
  const auto own = fixes_for_state(finding, window, hw, ctx);
  ASSERT_FALSE(own.empty());
  for (const char* rule : {"high_util_low_activity", "low_efficiency", "idle_holding_memory"}) {
    EXPECT_EQ(fixes_for_alert(rule, finding, window, hw, ctx), own) << rule;
  }
}

TEST(Fixes, HostLimitedCopiesNameTheStagingProcess) {
  StateFacts facts;
  facts.pcie_mibs = 3000;
  facts.pcie_share = 0.05;
  WindowStats window;
  const auto anonymous = host_limited_copies_fix(facts, window);
  EXPECT_NE(anonymous.find("(5 % of the link)"), std::string::npos) << anonymous;
  EXPECT_NE(anonymous.find("a process at a full CPU core"), std::string::npos) << anonymous;
  window.procs.top_cpu_name = "python";
  window.procs.top_cpu_pid = 42;
  window.procs.top_cpu_pct = 99;
  const auto named = host_limited_copies_fix(facts, window);
  EXPECT_NE(named.find("python (pid 42) at 99 % of a CPU core"), std::string::npos) << named;
  EXPECT_NE(named.find("pin_memory=True"), std::string::npos);
}

TEST(Fixes, AppendUniqueKeepsTheFirstOfEachFix) {
  std::vector<std::string> out{"a", "b"};
  append_unique(out, {"b", "c", "a", "d"});
  EXPECT_EQ(out, (std::vector<std::string>{"a", "b", "c", "d"}));
}

}  // namespace
}  // namespace gpulens::diagnosis
