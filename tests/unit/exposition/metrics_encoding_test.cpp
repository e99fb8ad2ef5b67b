// SPDX-License-Identifier: Apache-2.0
// /metrics as the scraper asks (issue 48): OpenMetrics by Accept, gzip by
// Accept-Encoding, and the text rewritten for OpenMetrics where the formats differ.
#include "exposition/metrics_encoding.hpp"

#include <gtest/gtest.h>
#include <zlib.h>

#include <string>

namespace gpulens::exposition {
namespace {

// What Prometheus 2.42 sends when it scrapes.
constexpr const char* kPrometheusAccept =
    "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;"
    "q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";

TEST(MetricsEncoding, NegotiatedFromAcceptAndAcceptEncoding) {
  EXPECT_TRUE(negotiate_metrics(kPrometheusAccept, "gzip").openmetrics);
  EXPECT_TRUE(negotiate_metrics(kPrometheusAccept, "gzip").gzip);
  // curl, a browser, an older Prometheus: the text format, uncompressed.
  EXPECT_FALSE(negotiate_metrics("", "").openmetrics);
  EXPECT_FALSE(negotiate_metrics("*/*", "").openmetrics);
  EXPECT_FALSE(negotiate_metrics("text/plain;version=0.0.4", "").openmetrics);
  EXPECT_FALSE(
      negotiate_metrics("text/plain;q=1, application/openmetrics-text;q=0.5", "").openmetrics);
  EXPECT_FALSE(negotiate_metrics("Application/OpenMetrics-Text; q=0", "").openmetrics);
  EXPECT_TRUE(negotiate_metrics(" Application/OpenMetrics-Text ; version=1.0.0", "").openmetrics);
  EXPECT_FALSE(negotiate_metrics("", "deflate, br").gzip);
  EXPECT_FALSE(negotiate_metrics("", "gzip;q=0").gzip);
  EXPECT_TRUE(negotiate_metrics("", "br, GZIP ;q=0.5").gzip);
}

TEST(MetricsEncoding, OpenMetricsTextWhereTheFormatsDiffer) {
  const std::string text =
      "# HELP a_total Requests, \"all\" of them.\n"
      "# TYPE a_total counter\n"
      "a_total{code=\"200\"} 3\n"
      "\n"
      "# HELP DCGM_X Energy without the suffix.\n"
      "# TYPE DCGM_X counter\n"
      "DCGM_X{gpu=\"0\"} 5\n"
      "# TYPE u untyped\n"
      "u 1\n"
      "# a comment\n"
      "# HELP g A gauge.\n"
      "# TYPE g gauge\n"
      "g 0.5\n";
  EXPECT_EQ(to_openmetrics(text),
            "# HELP a Requests, \\\"all\\\" of them.\n"
            "# TYPE a counter\n"
            "a_total{code=\"200\"} 3\n"
            "# HELP DCGM_X Energy without the suffix.\n"
            "# TYPE DCGM_X unknown\n"
            "DCGM_X{gpu=\"0\"} 5\n"
            "# TYPE u unknown\n"
            "u 1\n"
            "# HELP g A gauge.\n"
            "# TYPE g gauge\n"
            "g 0.5\n"
            "# EOF\n");
  EXPECT_EQ(to_openmetrics(""), "# EOF\n");
}

TEST(MetricsEncoding, GzipRoundTrips) {
  std::string text;
  for (int i = 0; i < 2000; ++i)
    text += "gpulens_sm_active_ratio{gpu=\"" + std::to_string(i) + "\"} 0.5\n";
  auto packed = gzip_compress(text);
  ASSERT_TRUE(packed) << packed.error().message;
  ASSERT_GE(packed->size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>((*packed)[0]), 0x1f);  // the gzip magic
  EXPECT_EQ(static_cast<unsigned char>((*packed)[1]), 0x8b);
  EXPECT_LT(packed->size(), text.size() / 4);
  z_stream z{};
  ASSERT_EQ(inflateInit2(&z, 15 + 16), Z_OK);
  std::string back(text.size() + 1, '\0');
  z.next_in = reinterpret_cast<Bytef*>(packed->data());
  z.avail_in = static_cast<uInt>(packed->size());
  z.next_out = reinterpret_cast<Bytef*>(back.data());
  z.avail_out = static_cast<uInt>(back.size());
  EXPECT_EQ(inflate(&z, Z_FINISH), Z_STREAM_END);
  back.resize(z.total_out);
  inflateEnd(&z);
  EXPECT_EQ(back, text);
}

}  // namespace
}  // namespace gpulens::exposition
