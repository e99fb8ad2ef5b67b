// SPDX-License-Identifier: Apache-2.0
#include "core/trace_reader.hpp"

#include <gtest/gtest.h>

#include "core/input_limits.hpp"
#include "core/json_format.hpp"
#include "core/trace_writer.hpp"

namespace gpulens {
namespace {

const std::string kReaderHeader =
    R"({"format": "gpu-trace", "version": 1, "host": "h", "interval_s": 0.1, "devices": [{"index": 0, "name": "NVIDIA H100 80GB HBM3", "sm_count": 132, "pcie_gen": 5, "pcie_width": 16}]})";

TEST(TraceReader, ReadsSamplesMarksAndProcesses) {
  const std::string text =
      kReaderHeader + "\n" +
      R"({"t": 10.0, "mark": "one_sm:start", "blocks": 1})"
      "\n" +
      R"({"t": 10.1, "gpu": 0, "gpu_util": 100, "sm_active": 0.76, "procs": [{"pid": 42, "name": "calib", "used_mib": 512, "cpu_pct": 99.5}], "x_custom": 7})"
      "\n";
  auto trace = read_trace_string(text, "t.jsonl");
  ASSERT_TRUE(trace) << trace.error().message;
  ASSERT_EQ(trace->header.devices.size(), 1u);
  EXPECT_EQ(trace->header.devices[0].sm_count, 132);
  ASSERT_EQ(trace->marks.size(), 1u);
  EXPECT_EQ(trace->marks[0].name, "one_sm:start");
  EXPECT_EQ(trace->marks[0].fields["blocks"], 1);
  ASSERT_EQ(trace->samples.size(), 1u);
  const auto& s = trace->samples[0];
  EXPECT_EQ(s.get(Metric::GpuUtil), 100.0);
  EXPECT_DOUBLE_EQ(*s.get(Metric::SmActive), 0.76);
  EXPECT_FALSE(s.get(Metric::TensorActive).has_value()) << "absent keys stay absent, never 0";
  ASSERT_TRUE(s.procs.has_value());
  EXPECT_EQ((*s.procs)[0].pid, 42u);
  EXPECT_EQ((*s.procs)[0].cpu_pct, 99.5);
  EXPECT_EQ(s.extra["x_custom"], 7) << "unknown keys are kept";
}

TEST(TraceReader, MalformedLineNamesFileAndLine) {
  const std::string text = kReaderHeader + "\n" +
                           R"({"t": 1, "gpu": 0})"
                           "\n" +
                           "{not json\n" +
                           R"({"t": 2, "gpu": 0})"
                           "\n";
  auto trace = read_trace_string(text, "bad.jsonl");
  ASSERT_FALSE(trace);
  EXPECT_EQ(trace.error().message, "bad.jsonl:3: not valid JSON");
}

TEST(TraceReader, WrongTypeIsAnError) {
  const std::string text = kReaderHeader + "\n" +
                           R"({"t": 1, "gpu": 0, "gpu_util": "high"})"
                           "\n";
  auto trace = read_trace_string(text, "x.jsonl");
  ASSERT_FALSE(trace);
  EXPECT_NE(trace.error().message.find("x.jsonl:2: \"gpu_util\" must be a number"),
            std::string::npos)
      << trace.error().message;
}

TEST(TraceReader, LineThatIsNeitherSampleNorMark) {
  auto trace = read_trace_string(kReaderHeader + "\n{\"t\": 1}\n", "x.jsonl");
  ASSERT_FALSE(trace);
  EXPECT_NE(trace.error().message.find("x.jsonl:2: neither a sample"), std::string::npos);
}

TEST(TraceReader, LenientSkipsAndCounts) {
  const std::string text = kReaderHeader + "\n" + "garbage\n" +
                           R"({"t": 2, "gpu": 0})"
                           "\n" +
                           "[1,2]\n" +
                           R"({"t": 3, "gpu": 0})"
                           "\n";
  auto reader = TraceReader::from_string(text, "x.jsonl", {.lenient = true});
  ASSERT_TRUE(reader);
  int samples = 0;
  while (true) {
    auto e = reader->next();
    ASSERT_TRUE(e);
    if (!e->has_value()) break;
    ++samples;
  }
  EXPECT_EQ(samples, 2);
  EXPECT_EQ(reader->skipped_lines(), 2u);
}

TEST(TraceReader, TruncatedLastLineIsReportedAndSkipped) {
  const std::string text = kReaderHeader + "\n" +
                           R"({"t": 1, "gpu": 0, "gpu_util": 5})"
                           "\n" +
                           R"({"t": 2, "gpu": 0, "gpu_ut)";
  auto trace = read_trace_string(text, "cut.jsonl");
  ASSERT_TRUE(trace) << trace.error().message;
  EXPECT_EQ(trace->samples.size(), 1u);
  ASSERT_EQ(trace->warnings.size(), 1u);
  EXPECT_EQ(trace->warnings[0], "cut.jsonl:3: truncated last line skipped");
}

TEST(TraceReader, RefusesOtherFormatsAndVersions) {
  auto v2 = read_trace_string(R"({"format": "gpu-trace", "version": 2})"
                              "\n",
                              "v2.jsonl");
  ASSERT_FALSE(v2);
  EXPECT_EQ(v2.error().message,
            "v2.jsonl:1: unsupported gpu-trace version 2 (this gpulens reads version 1)");
  auto other = read_trace_string(R"({"format": "csv"})"
                                 "\n",
                                 "o.jsonl");
  ASSERT_FALSE(other);
  EXPECT_NE(other.error().message.find("not a gpu-trace file"), std::string::npos);
  auto empty = read_trace_string("", "e.jsonl");
  ASSERT_FALSE(empty);
  auto missing = read_trace("/nonexistent/trace.jsonl");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("/nonexistent/trace.jsonl: cannot open"),
            std::string::npos);
}

TEST(TraceReader, WriterRoundTripLosesNothing) {
  auto original =
      read_trace(std::string(GPULENS_SOURCE_DIR) + "/examples/calibration-h100.trace.jsonl");
  ASSERT_TRUE(original) << original.error().message;
  const std::string path = ::testing::TempDir() + "/roundtrip.jsonl";
  {
    auto writer = TraceWriter::open(path, original->header);
    ASSERT_TRUE(writer);
    std::size_t next_mark = 0;
    for (const auto& s : original->samples) {
      while (next_mark < original->marks.size() && original->marks[next_mark].t <= s.t) {
        ASSERT_TRUE(writer->write(original->marks[next_mark++]));
      }
      ASSERT_TRUE(writer->write(s));
    }
  }
  auto copy = read_trace(path);
  ASSERT_TRUE(copy) << copy.error().message;
  ASSERT_EQ(copy->samples.size(), original->samples.size());
  for (std::size_t i = 0; i < copy->samples.size(); ++i) {
    ASSERT_EQ(copy->samples[i].values, original->samples[i].values) << "sample " << i;
    ASSERT_NEAR(copy->samples[i].t, original->samples[i].t, 1e-3);
  }
  EXPECT_EQ(copy->header.devices[0].uuid, original->header.devices[0].uuid);
}

}  // namespace
}  // namespace gpulens

namespace gpulens {
namespace {

TEST(TraceReader, NanFromPythonWritersReadsAsNotMeasured) {
  const std::string text =
      kReaderHeader + "\n" +
      R"({"t": 1, "gpu": 0, "gpu_util": NaN, "sm_active": 5, "x_note": "NaN stays"})"
      "\n";
  auto trace = read_trace_string(text, "py.jsonl");
  ASSERT_TRUE(trace) << trace.error().message;
  ASSERT_EQ(trace->samples.size(), 1u);
  EXPECT_FALSE(trace->samples[0].get(Metric::GpuUtil).has_value());
  EXPECT_EQ(trace->samples[0].get(Metric::SmActive), 5.0);
  EXPECT_EQ(trace->samples[0].extra["x_note"], "NaN stays");
  ASSERT_EQ(trace->warnings.size(), 1u);
  EXPECT_EQ(trace->warnings[0], "py.jsonl:2: NaN/Infinity read as not measured");
}

}  // namespace
}  // namespace gpulens

namespace gpulens {
namespace {

TEST(TraceReader, ProcessNamesThatAreNotUtf8AreReadBack) {
  // A local user can name a process with any bytes. Written raw, a lone 0xFF made
  // the whole line invalid JSON: `report` refused the recording gpulens wrote.
  Sample sample;
  sample.t = 10.1;
  sample.gpu = 0;
  ProcessSample proc;
  proc.pid = 42;
  proc.name =
      "a\xFF"
      "b\x9B"
      "c\xE2\x82";                               // lone bytes and a cut-off sequence
  proc.cmdline = "python \xC3\xA9t\xC3\xA9.py";  // valid UTF-8 stays as it is
  sample.procs = std::vector<ProcessSample>{proc};
  std::string line;
  append_sample_json(line, sample);
  auto trace = read_trace_string(kReaderHeader + "\n" + line + "\n", "bytes.jsonl");
  ASSERT_TRUE(trace) << trace.error().message;
  ASSERT_EQ(trace->samples.size(), 1u);
  const auto& read = (*trace->samples[0].procs)[0];
  EXPECT_EQ(read.name,
            "a\xEF\xBF\xBD"
            "b\xEF\xBF\xBD"
            "c\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(read.cmdline, "python \xC3\xA9t\xC3\xA9.py");
}

}  // namespace
}  // namespace gpulens

namespace gpulens {
namespace {

// Recordings made before gpulens read the integer pipe have no int_active key:
// they read as they did, the integer pipe absent (not measured), never 0.
TEST(TraceReader, RecordingsFromBeforeTheIntegerPipeReadWithItAbsent) {
  auto trace =
      read_trace(std::string(GPULENS_SOURCE_DIR) + "/examples/calibration-h100.trace.jsonl");
  ASSERT_TRUE(trace) << trace.error().message;
  ASSERT_FALSE(trace->samples.empty());
  std::size_t with_fp16 = 0;
  for (const auto& s : trace->samples) {
    if (s.values.has(Metric::Fp16Active)) ++with_fp16;
    EXPECT_FALSE(s.values.has(Metric::IntActive)) << "t=" << s.t;
    EXPECT_FALSE(s.extra.contains("int_active"));
  }
  EXPECT_GT(with_fp16, 0u) << "the old recording has the other pipes";
  EXPECT_TRUE(trace->warnings.empty());
}

TEST(TraceReader, IntegerPipeIsAPercentLikeTheOtherPipes) {
  const std::string text =
      kReaderHeader + "\n" +
      R"({"t": 1, "gpu": 0, "sm_active": 92, "int_active": 63.5, "fp32_active": 0, "tensor_active": 0})"
      "\n" +
      R"({"t": 2, "gpu": 0, "sm_active": 92, "int_active": 250})"
      "\n";
  auto trace = read_trace_string(text, "int.jsonl");
  ASSERT_TRUE(trace) << trace.error().message;
  ASSERT_EQ(trace->samples.size(), 2u);
  EXPECT_EQ(trace->samples[0].get(Metric::IntActive), 63.5);
  EXPECT_FALSE(trace->samples[0].extra.contains("int_active")) << "a metric, not an extra key";
  std::string line;
  append_sample_json(line, trace->samples[0]);
  EXPECT_NE(line.find("\"int_active\": 63.5"), std::string::npos) << line;
  // Beyond 100 % it is dropped like any other pipe reading.
  EXPECT_FALSE(trace->samples[1].get(Metric::IntActive).has_value());
  EXPECT_EQ(trace->samples[1].get(Metric::SmActive), 92.0);
  ASSERT_FALSE(trace->warnings.empty());
  EXPECT_NE(trace->warnings.back().find("int_active 250"), std::string::npos)
      << trace->warnings.back();
}

}  // namespace
}  // namespace gpulens

namespace gpulens {
namespace {

// Launch records (`gpulens run`'s, docs/kernels.md) are kept for the report, up to a
// count and a size, and the rest is said once: a recording someone made by hand
// cannot make its reader hold gigabytes.
TEST(TraceReader, LaunchRecordsAreKeptUpToTheirLimits) {
  std::string text = kReaderHeader + "\n";
  for (std::size_t i = 0; i < kMaxLaunchRecordLines + 3; ++i) {
    text += "{\"x_launches\":1,\"pid\":" + std::to_string(i) + "}\n";
  }
  auto trace = read_trace_string(text, "launches.jsonl");
  ASSERT_TRUE(trace) << trace.error().message;
  EXPECT_EQ(trace->launch_records.size(), kMaxLaunchRecordLines);
  ASSERT_EQ(trace->warnings.size(), 1u);
  EXPECT_NE(trace->warnings[0].find("launch records past the first 8192 or 64 MiB are not read"),
            std::string::npos)
      << trace->warnings[0];
}

TEST(TraceReader, LaunchRecordsStopAtTheirByteBudget) {
  constexpr std::size_t kMiB = std::size_t{1} << 20;
  EXPECT_TRUE(keeps_launch_record(0, 0, 8 * kMiB));
  EXPECT_TRUE(keeps_launch_record(15, 60 * kMiB, 4 * kMiB)) << "exactly 64 MiB";
  EXPECT_FALSE(keeps_launch_record(15, 60 * kMiB, 4 * kMiB + 1));
  EXPECT_FALSE(keeps_launch_record(kMaxLaunchRecordLines, 0, 10));
}

}  // namespace
}  // namespace gpulens
