// SPDX-License-Identifier: Apache-2.0
// HeaderRepeat: when the terminal table of `gpulens stream` shows its header again;
// StreamFormatter: its columns.
#include "render/stream_format.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
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

// The integer pipe is a column like the other pipes (not shown by default, as
// they are not): its value, "n/a" on a GPU that cannot give it, "-" when not
// measured; CSV has it among every metric.
TEST(StreamFormatter, IntegerPipeColumn) {
  TraceHeader header;
  header.devices.resize(3);
  for (int i = 0; i < 3; ++i) header.devices[i].index = i;
  header.devices[1].unsupported.push_back({Metric::IntActive, "n/a: GPM needs Hopper or newer"});
  StreamFormatOptions o;
  o.columns = {"gpu", "fp32", "int"};
  auto f = StreamFormatter::create(o, header);
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_NE(f->header_text().find("int"), std::string::npos) << f->header_text();
  Sample busy;
  busy.gpu = 0;
  busy.values.set(Metric::Fp32Active, 0);
  busy.values.set(Metric::IntActive, 63.5);
  EXPECT_EQ(f->format(busy, nullptr), "  0   0.0  63.5\n");
  Sample ampere;
  ampere.gpu = 1;
  EXPECT_EQ(f->format(ampere, nullptr), "  1     -   n/a\n");
  Sample unmeasured;
  unmeasured.gpu = 2;
  EXPECT_EQ(f->format(unmeasured, nullptr), "  2     -     -\n");

  const auto defaults = default_stream_columns();
  EXPECT_EQ(std::find(defaults.begin(), defaults.end(), "int"), defaults.end());
  EXPECT_EQ(std::find(defaults.begin(), defaults.end(), "fp32"), defaults.end());

  o.format = StreamFormat::Csv;
  o.columns.clear();
  auto csv = StreamFormatter::create(o, header);
  ASSERT_TRUE(csv.ok());
  EXPECT_NE(csv->header_text().find(",fp16_active,int_active,"), std::string::npos);
  EXPECT_NE(csv->format(busy, nullptr).find(",63.5,"), std::string::npos);
}

}  // namespace
}  // namespace gpulens::render
