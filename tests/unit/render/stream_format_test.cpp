// SPDX-License-Identifier: Apache-2.0
// HeaderRepeat: when the terminal table of `gpulens stream` shows its header again.
#include "render/stream_format.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace gpulens::render {
namespace {

// dmon's habit: the column names come back once a screenful of rows has gone by,
// and a tick's lines (one per GPU) never straddle a header.
TEST(StreamHeaderRepeat, EveryScreenfulWithTicksKeptWhole) {
  HeaderRepeat one_gpu(24, 2);  // 22 rows under the header
  int headers = 0;
  for (int tick = 0; tick < 66; ++tick) headers += one_gpu.due(1) ? 1 : 0;
  EXPECT_EQ(headers, 2);  // before rows 23 and 45

  HeaderRepeat eight_gpus(24, 2);
  std::vector<int> at;
  for (int tick = 0; tick < 9; ++tick) {
    if (eight_gpus.due(8)) at.push_back(tick);
  }
  EXPECT_EQ(at, (std::vector<int>{2, 4, 6, 8}));  // two ticks (16 rows) per screen

  HeaderRepeat unknown(0, 2);  // no terminal size: 24 rows assumed
  headers = 0;
  for (int tick = 0; tick < 23; ++tick) headers += unknown.due(1) ? 1 : 0;
  EXPECT_EQ(headers, 1);

  HeaderRepeat tiny(3, 2);  // a tick taller than the screen still prints, one header each
  EXPECT_FALSE(tiny.due(4));
  EXPECT_TRUE(tiny.due(4));
}

}  // namespace
}  // namespace gpulens::render
