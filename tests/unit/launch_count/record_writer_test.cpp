// SPDX-License-Identifier: Apache-2.0
// The record the counter writes from its totals: names demangled and summed, the most
// launched first, the list cut with the rest counted as unlisted.
#include "launch_count/record_writer.hpp"

#include <gtest/gtest.h>

namespace gpulens::launch_count {
namespace {

TEST(LaunchRecordWriter, NamesAreDemangledAndTheMostLaunchedComeFirst) {
  Totals t;
  t.kernels = {{"_Z6squarePfi", 10}, {"kernel_7", 30}, {"_Z6squarePfi.cold", 0}};
  t.kernel_launches = 45;
  t.untold = 5;
  t.graph_launches = 2;
  t.graphs = 1;
  const auto r = make_record(t, 99, "python3", 100, 200, true);
  ASSERT_EQ(r.kernels.size(), 3u);
  EXPECT_EQ(r.kernels[0].name, "kernel_7") << "not a C++ name: kept as the driver gave it";
  EXPECT_EQ(r.kernels[1].name, "square(float*, int)");
  EXPECT_EQ(r.unlisted_launches, 5u);
  EXPECT_EQ(r.graph_launches, 2u);
  EXPECT_TRUE(r.final);
  EXPECT_EQ(r.written_ns, 200);
}

TEST(LaunchRecordWriter, BeyondTheListsLengthLaunchesAreUnlisted) {
  Totals t;
  for (int i = 0; i < 600; ++i) {
    t.kernels["k" + std::to_string(i)] = static_cast<std::uint64_t>(i + 1);
    t.kernel_launches += static_cast<std::uint64_t>(i + 1);
  }
  const auto r = make_record(t, 1, "x", 5, 4, false);
  ASSERT_EQ(r.kernels.size(), kernels::launch_record::max_kernels);
  EXPECT_EQ(r.kernels[0].name, "k599");
  std::uint64_t listed = 0;
  for (const auto& k : r.kernels) listed += k.launches;
  EXPECT_EQ(listed + r.unlisted_launches, t.kernel_launches);
  EXPECT_EQ(r.unlisted_launches, 100u * 101u / 2u);
  EXPECT_EQ(r.written_ns, 5) << "never before the first launch";
}

}  // namespace
}  // namespace gpulens::launch_count
