// SPDX-License-Identifier: Apache-2.0
// The HTML report is one self-contained page: nothing fetched, everything
// escaped, small whatever the trace's length, every section present.
#include <gtest/gtest.h>

#include "core/job_marks.hpp"
#include "render/verdict_output.hpp"

namespace gpulens::render {
namespace {

const std::string kFixtures = GPULENS_FIXTURES;

Trace training() {
  auto trace = read_trace(kFixtures + "/traces/training-h100.trace.jsonl",
                          TraceReadOptions{.lenient = true});
  if (!trace) throw std::runtime_error(trace.error().message);
  return std::move(*trace);
}

void expect_self_contained(const std::string& html) {
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  for (const char* banned : {"http://", "https://", "<link", " src=", "@import", "url("}) {
    EXPECT_EQ(html.find(banned), std::string::npos) << "the page refers outside: " << banned;
  }
  EXPECT_NE(html.find("</html>"), std::string::npos);
}

TEST(ReportHtml, AllSectionsOfATrainingRun) {
  const Trace trace = training();
  verdict::VerdictOptions o;
  o.peak_tflops = 989.4;
  o.price_per_gpu_hour = 2.5;
  const std::string html = verdict_to_html(verdict::build_verdict(trace, o), trace);
  expect_self_contained(html);
  for (const char* part :
       {"Verdict", "What to do first", "Utilization funnel", "What the GPUs were doing",
        "Per GPU over time", "Phases", "train_dataloader_starved", "Alerts", "Cost", "MFU",
        "class=\"chart funnel\"", "class=\"chart activity\"", "class=\"chart memory\"",
        "class=\"chart power\"", "id=\"gl-hover\"", "host_bound"}) {
    EXPECT_NE(html.find(part), std::string::npos) << part;
  }
  EXPECT_LT(html.size(), 400u * 1024);
}

TEST(ReportHtml, TextFromTheTraceIsEscaped) {
  Trace trace = training();
  trace.marks.insert(trace.marks.begin(),
                     job_start_mark(trace.samples.front().t, "evil </script><b>x</b> & 'q'", 1));
  const std::string html =
      verdict_to_html(verdict::build_verdict(trace, verdict::VerdictOptions{}), trace);
  EXPECT_EQ(html.find("<b>x</b>"), std::string::npos);
  EXPECT_NE(html.find("evil &lt;/script&gt;&lt;b&gt;x&lt;/b&gt; &amp; &#39;q&#39;"),
            std::string::npos);
  // Inside the data script no "</" may end it early.
  const auto data = html.find("id=\"gl-hover\">");
  ASSERT_NE(data, std::string::npos);
  const auto end = html.find("</script>", data);
  EXPECT_EQ(html.substr(data, end - data).find("</"), std::string::npos);
}

TEST(ReportHtml, LongTracesAreDownsampledToAFewHundredKilobytes) {
  // Eight hours at one sample per second on 2 GPUs: 57,600 samples.
  Trace t;
  t.header.interval_s = 1.0;
  for (int g = 0; g < 2; ++g) {
    DeviceInfo d;
    d.index = g;
    d.name = "NVIDIA H100 80GB HBM3";
    d.mem_total_mib = 81559;
    d.power_limit_w = 700;
    t.header.devices.push_back(d);
  }
  for (int i = 0; i < 8 * 3600; ++i) {
    for (int g = 0; g < 2; ++g) {
      Sample s;
      s.t = 1.7e9 + i;
      s.gpu = g;
      const double wave = (i / 600) % 2 == 0 ? 95.0 : 10.0;
      s.values.set(Metric::GpuUtil, wave);
      s.values.set(Metric::SmActive, wave * 0.9);
      s.values.set(Metric::TensorActive, wave * 0.4);
      s.values.set(Metric::DramActive, wave * 0.3);
      s.values.set(Metric::PowerW, 150 + wave * 5);
      s.values.set(Metric::MemUsedMib, 40000);
      t.samples.push_back(s);
    }
  }
  const std::string html = verdict_to_html(verdict::build_verdict(t, verdict::VerdictOptions{}), t);
  expect_self_contained(html);
  EXPECT_LT(html.size(), 600u * 1024) << "the page grows with the trace";
}

TEST(ReportHtml, NothingMeasuredSaysSo) {
  Trace t;
  t.marks.push_back(job_start_mark(100, "python train.py", 7));
  JobRecord job;
  job.exit_code = 0;
  job.not_measured = "cannot load NVML";
  t.marks.push_back(job_end_mark(160, job));
  const verdict::Verdict v = verdict::build_verdict(t, verdict::VerdictOptions{});
  EXPECT_FALSE(v.measured);
  EXPECT_DOUBLE_EQ(v.duration_s, 60);
  const std::string html = verdict_to_html(v, t);
  expect_self_contained(html);
  EXPECT_NE(html.find("Nothing was measured"), std::string::npos);
  EXPECT_NE(html.find("cannot load NVML"), std::string::npos);
  const std::string text = verdict_to_text(v);
  EXPECT_NE(text.find("Nothing was measured: cannot load NVML"), std::string::npos) << text;
}

}  // namespace
}  // namespace gpulens::render
