// SPDX-License-Identifier: Apache-2.0
// The one Prometheus writer of the exposition: families and samples in the text
// format, label values and HELP text escaped (and made safe first), numbers as
// Prometheus parses them back, and unit factors applied with one rounding.
#include "exposition/prom_writer.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <string>

namespace gpulens::exposition {
namespace {

TEST(Exposition, NumbersCarryNoBinaryNoise) {
  std::string out;
  const double percent = 16.806;
  append_prom_number(out, percent / 100);  // 0.16806000000000001 in shortest round-trip form
  out += ' ';
  append_prom_number(out, 0.7513725467756682);
  out += ' ';
  append_prom_number(out, 123456789.5);
  out += ' ';
  append_prom_number(out, 81559.0 * 1048576);
  EXPECT_EQ(out, "0.16806 0.751372546775668 123456789.5 85520809984");
}

TEST(Exposition, SpecialNumbers) {
  std::string out;
  append_prom_number(out, 0.1);
  out += ' ';
  append_prom_number(out, 1e20);
  out += ' ';
  append_prom_number(out, -3);
  out += ' ';
  append_prom_number(out, std::numeric_limits<double>::quiet_NaN());
  out += ' ';
  append_prom_number(out, std::numeric_limits<double>::infinity());
  EXPECT_EQ(out, "0.1 1e+20 -3 NaN +Inf");
}

TEST(PromWriter, AFamilyAndItsSamples) {
  std::string out;
  PromWriter w(out);
  w.family("gpulens_gpu_power_watts", "gauge", "Power draw.");
  w.sample("gpulens_gpu_power_watts", render_labels({{"gpu", "0"}, {"uuid", "GPU-1"}}), 135.5);
  w.sample("gpulens_gpu_power_watts", "", 2);
  w.sample("gpulens_gpu_power_watts", render_labels({{"gpu", "1"}}), "pid", "42", 0.25);
  EXPECT_EQ(out,
            "# HELP gpulens_gpu_power_watts Power draw.\n"
            "# TYPE gpulens_gpu_power_watts gauge\n"
            "gpulens_gpu_power_watts{gpu=\"0\",uuid=\"GPU-1\"} 135.5\n"
            "gpulens_gpu_power_watts 2\n"
            "gpulens_gpu_power_watts{gpu=\"1\",pid=\"42\"} 0.25\n");
}

TEST(PromWriter, LabelValuesEscapeBackslashNewlineAndQuote) {
  EXPECT_EQ(render_labels({{"command", "a\\b\n\"c\""}}), "command=\"a\\\\b\\n\\\"c\\\"\"");
  std::string labels = "gpu=\"0\"";
  append_label(labels, "user", "");
  EXPECT_EQ(labels, "gpu=\"0\",user=\"\"");
}

TEST(PromWriter, HelpTextEscapesBackslashAndNewlineButNotQuotes) {
  std::string out;
  PromWriter(out).family("x", "counter", "say \"hi\"\\\nbye");
  EXPECT_EQ(out, "# HELP x say \"hi\"\\\\\\nbye\n# TYPE x counter\n");
}

TEST(PromWriter, ALabelThatIsNotUtf8OrHoldsControlsIsMadeSafe) {
  // Prometheus refuses a whole scrape over one label that is not UTF-8.
  const std::string labels = render_labels({{"command", std::string("a\xff\x1b[31mb")}});
  EXPECT_EQ(labels.find('\xff'), std::string::npos) << labels;
  EXPECT_EQ(labels.find('\x1b'), std::string::npos) << labels;
  EXPECT_TRUE(labels.starts_with("command=\"a")) << labels;
  EXPECT_TRUE(labels.ends_with("b\"")) << labels;
}

TEST(PromWriter, NegativeInfinityAndLargeIntegers) {
  std::string out;
  append_prom_number(out, -std::numeric_limits<double>::infinity());
  out += ' ';
  append_prom_number(out, 1e15);  // past the integers written whole
  out += ' ';
  append_prom_number(out, 999999999999999.0);
  EXPECT_EQ(out, "-Inf 1e+15 999999999999999");
}

TEST(PromWriter, FactorsBelowOneDivideOnce) {
  EXPECT_EQ(scaled(0.13, 0.01), 0.13 / 100);  // 0.0013
  EXPECT_NE(0.13 * 0.01, 0.13 / 100);         // 0.0013000000000000002: what it avoids
  EXPECT_EQ(scaled(1500, 0.001), 1.5);
  EXPECT_EQ(scaled(3, kMib), 3 * 1024.0 * 1024.0);
  EXPECT_EQ(scaled(5, 1), 5);
}

}  // namespace
}  // namespace gpulens::exposition
