// SPDX-License-Identifier: Apache-2.0
// The verdict as JSON (`report --format json`, docs/report.md): the funnel's
// shares between 0 and 1, the lists, the cost and both MFU figures, and the
// format's name, on a reference recording through the binary.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "cli_support.hpp"

namespace gpulens::render {
namespace {

using testing::reference_trace;
using testing::run_gpulens;

std::string json_trace_arg(const std::string& name) {
  return reference_trace(name) + " --lenient";
}

TEST(ReportGolden, JsonHasTheDocumentedKeys) {
  const auto r = run_gpulens("report --format json " + json_trace_arg("training-h100"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  for (const char* key : {"allocated", "kernel_active", "sm_active", "tensor_active"}) {
    ASSERT_TRUE(j["funnel"][key].is_number()) << key;
    EXPECT_GE(j["funnel"][key].get<double>(), 0);
    EXPECT_LE(j["funnel"][key].get<double>(), 1);
  }
  for (const char* key : {"states", "alerts", "fixes", "phases"}) EXPECT_TRUE(j[key].is_array());
  EXPECT_TRUE(j["cost"]["total"].is_number());
  EXPECT_TRUE(j["mfu"]["model"]["mfu"].is_number());
  EXPECT_TRUE(j["mfu"]["estimate"]["mfu"].is_number());
  EXPECT_EQ(j["format"], "gpulens-report");
}

}  // namespace
}  // namespace gpulens::render
