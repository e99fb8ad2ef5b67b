// SPDX-License-Identifier: Apache-2.0
// Regression tests for issue 17, class 1 and 2: inputs that crashed gpulens
// (deep nesting) or made it allocate without bound (long lines, huge headers,
// samples for GPUs nobody described), and the --lenient count.
#include "core/input_limits.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "cli_support.hpp"
#include "core/marks_tail.hpp"
#include "core/trace_reader.hpp"

namespace gpulens {
namespace {

using testing::run_gpulens;

const std::string kHeader = R"({"format": "gpu-trace", "version": 1, "devices": [{"index": 0}]})";

std::string nested_arrays(std::size_t depth) {
  return std::string(depth, '[') + std::string(depth, ']');
}

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

TEST(InputLimits, HeaderNumbersOutOfRangeReadAsAbsent) {
  // Found by fuzz_trace: 7.8e94 converted to an int is undefined behaviour.
  const std::string text =
      R"({"format": "gpu-trace", "version": 1, "interval_s": 0.1, "devices": [)"
      R"({"index": 0, "name": "G", "sm_count": 7.8e94, "pcie_gen": -1e300, "pcie_width": 16.0}]})"
      "\n";
  auto trace = read_trace_string(text, "t.jsonl");
  ASSERT_TRUE(trace) << trace.error().message;
  ASSERT_EQ(trace->header.devices.size(), 1u);
  EXPECT_FALSE(trace->header.devices[0].sm_count.has_value());
  EXPECT_FALSE(trace->header.devices[0].pcie_gen.has_value());
  EXPECT_EQ(trace->header.devices[0].pcie_width, 16);
}

TEST(InputLimits, NestingIsMeasuredOutsideStringsOnly) {
  EXPECT_FALSE(json_nesting_exceeds(R"({"a": [[1]], "s": "[[[[[[["})", 3));
  EXPECT_TRUE(json_nesting_exceeds(R"({"a": [[[1]]]})", 3));
  EXPECT_FALSE(json_nesting_exceeds(R"({"s": "\"[[[["})", 1));
  EXPECT_FALSE(json_nesting_exceeds(nested_arrays(kMaxJsonDepth)));
  EXPECT_TRUE(json_nesting_exceeds(nested_arrays(kMaxJsonDepth + 1)));
}

TEST(InputLimits, DeeplyNestedSampleIsRefusedNotACrash) {
  // 200,000 levels crashed the reader's copy of the value (stack overflow).
  const std::string text = kHeader + "\n" + R"({"t": 1, "gpu": 0, "x": )" + nested_arrays(200000) +
                           "}\n" + R"({"t": 2, "gpu": 0, "gpu_util": 1})" + "\n";
  auto trace = read_trace_string(text, "deep.jsonl");
  ASSERT_FALSE(trace);
  EXPECT_EQ(trace.error().message, "deep.jsonl:2: nested deeper than 64 levels");
  auto lenient = read_trace_string(text, "deep.jsonl", {.lenient = true});
  ASSERT_TRUE(lenient) << lenient.error().message;
  EXPECT_EQ(lenient->samples.size(), 1u);
}

TEST(InputLimits, DeeplyNestedMarkAndHeaderAreRefused) {
  std::string mark = R"({"t": 1, "mark": "m", "f": )";
  for (int i = 0; i < 100000; ++i) mark += R"({"a": )";
  // Appended piece by piece: "1" + std::string(...) (operator+ of a char pointer
  // and a temporary) trips GCC 12's false -Wrestrict at -O3 (GCC bug 105651).
  mark += '1';
  mark.append(100000, '}');
  mark += '}';
  auto trace =
      read_trace_string(kHeader + "\n" + mark + "\n" + R"({"t": 2, "gpu": 0})" + "\n", "m.jsonl");
  ASSERT_FALSE(trace);
  EXPECT_NE(trace.error().message.find("m.jsonl:2: nested deeper"), std::string::npos);
  auto header = read_trace_string(
      R"({"format": "gpu-trace", "version": 1, "x": )" + nested_arrays(70000) + "}\n", "h.jsonl");
  ASSERT_FALSE(header);
  EXPECT_EQ(header.error().message, "h.jsonl:1: the header is nested deeper than 64 levels");
}

TEST(InputLimits, StreamSurvivesANestedLine) {
  // `stream` printed the unknown key back and crashed in the JSON printer.
  const std::string path = write_temp(
      "nested-stream.jsonl", kHeader + "\n" + R"({"t": 1, "gpu": 0, "x": )" + nested_arrays(70000) +
                                 "}\n" + R"({"t": 2, "gpu": 0})" + "\n");
  const auto r = run_gpulens("stream -f json --speed 0 --replay " + path);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("nested-stream.jsonl:2: nested deeper than 64 levels"), std::string::npos)
      << r.err;
  const auto lenient = run_gpulens("stream -f json --lenient --speed 0 --replay " + path);
  EXPECT_EQ(lenient.exit_code, 0) << lenient.err;
  EXPECT_NE(lenient.err.find("1 malformed line(s) skipped"), std::string::npos) << lenient.err;
}

TEST(InputLimits, OverlongLinesAreRefusedWithoutReadingThemWhole) {
  std::string text = kHeader + "\n" + R"({"t": 1, "gpu": 0, "x": ")" +
                     std::string(kMaxLineBytes + 10, 'a') + "\"}\n" +
                     R"({"t": 2, "gpu": 0, "gpu_util": 3})" + "\n";
  auto strict = read_trace_string(text, "long.jsonl");
  ASSERT_FALSE(strict);
  EXPECT_EQ(strict.error().message, "long.jsonl:2: longer than 8388608 bytes");
  auto lenient = read_trace_string(text, "long.jsonl", {.lenient = true});
  ASSERT_TRUE(lenient) << lenient.error().message;
  ASSERT_EQ(lenient->samples.size(), 1u);
  EXPECT_EQ(lenient->samples[0].get(Metric::GpuUtil), 3.0);
}

TEST(InputLimits, EndlessHeaderLineStopsAtTheLimit) {
  // `gpulens report /dev/zero` grew without end: one line that never ends.
  const auto r = run_gpulens("report /dev/zero");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("/dev/zero:1: the header is longer than"), std::string::npos) << r.err;
}

TEST(InputLimits, ReadLineBoundedKeepsLinesAndStopsEarly) {
  std::istringstream in("ab\r\n\ncdefgh\nlast");
  std::string line;
  EXPECT_EQ(read_line_bounded(in, line, 4), LineRead::Line);
  EXPECT_EQ(line, "ab\r");
  EXPECT_EQ(read_line_bounded(in, line, 4), LineRead::Line);
  EXPECT_EQ(line, "");
  EXPECT_EQ(read_line_bounded(in, line, 4), LineRead::TooLong);
  skip_line(in);
  EXPECT_EQ(read_line_bounded(in, line, 4), LineRead::Line);
  EXPECT_EQ(line, "last");
  EXPECT_EQ(read_line_bounded(in, line, 4), LineRead::End);
}

TEST(InputLimits, HeaderDeviceCountIsBounded) {
  std::string devices;
  for (std::size_t i = 0; i <= kMaxDevices; ++i) {
    if (i != 0) devices += ',';  // appends only: GCC bug 105651 (above)
    devices += R"({"index": )";
    devices += std::to_string(i);
    devices += '}';
  }
  auto trace = read_trace_string(
      R"({"format": "gpu-trace", "version": 1, "devices": [)" + devices + "]}\n", "d.jsonl");
  ASSERT_FALSE(trace);
  EXPECT_EQ(trace.error().message, "d.jsonl:1: the header lists 1025 devices (at most 1024)");
}

TEST(InputLimits, ProcessCountPerSampleIsBounded) {
  std::string procs;
  for (std::size_t i = 0; i <= kMaxProcsPerSample; ++i) {
    if (i != 0) procs += ',';  // appends only: GCC bug 105651 (above)
    procs += R"({"pid": )";
    procs += std::to_string(i);
    procs += '}';
  }
  auto trace = read_trace_string(kHeader + "\n" + R"({"t": 1, "gpu": 0, "procs": [)" + procs +
                                     "]}\n" + R"({"t": 2, "gpu": 0})" + "\n",
                                 "p.jsonl");
  ASSERT_FALSE(trace);
  EXPECT_EQ(trace.error().message, "p.jsonl:2: \"procs\" lists 4097 processes (at most 4096)");
}

TEST(InputLimits, SampleForAnUndescribedGpuIsAnError) {
  const std::string text = kHeader + "\n" + R"({"t": 1, "gpu": 7, "gpu_util": 1})" + "\n" +
                           R"({"t": 2, "gpu": 0, "gpu_util": 2})" + "\n";
  auto strict = read_trace_string(text, "g.jsonl");
  ASSERT_FALSE(strict);
  EXPECT_EQ(strict.error().message,
            "g.jsonl:2: a sample for GPU 7, which the header does not describe");
  auto lenient = read_trace_string(text, "g.jsonl", {.lenient = true});
  ASSERT_TRUE(lenient);
  ASSERT_EQ(lenient->samples.size(), 1u);
  EXPECT_EQ(lenient->samples[0].gpu, 0);
  // A header without a device list: any index below the device limit.
  const std::string bare = R"({"format": "gpu-trace", "version": 1})";
  EXPECT_TRUE(read_trace_string(bare + "\n" + R"({"t": 1, "gpu": 3})" + "\n", "b"));
  auto far = read_trace_string(
      bare + "\n" + R"({"t": 1, "gpu": 2000000000})" + "\n" + R"({"t": 2, "gpu": 0})" + "\n", "b");
  ASSERT_FALSE(far);
  EXPECT_EQ(far.error().message, "b:2: GPU 2000000000 is outside 0..1023");
}

TEST(InputLimits, LenientCountIsReportedAfterANanWarning) {
  // The count was dropped whenever another warning had come first.
  const std::string text = kHeader + "\n" + R"({"t": 1, "gpu": 0, "gpu_util": NaN})" + "\n" +
                           "{oops\n" + R"({"t": 2, "gpu": 0})" + "\n";
  auto trace = read_trace_string(text, "n.jsonl", {.lenient = true});
  ASSERT_TRUE(trace);
  ASSERT_EQ(trace->warnings.size(), 2u);
  EXPECT_EQ(trace->warnings[0], "n.jsonl:2: NaN/Infinity read as not measured");
  EXPECT_EQ(trace->warnings[1], "n.jsonl: 1 malformed line(s) skipped");
}

TEST(InputLimits, MarksFileBoundsItsLines) {
  const std::string path = ::testing::TempDir() + "/marks-limits.jsonl";
  {
    std::ofstream out(path, std::ios::binary);
    out << R"({"mark": "deep", "f": )" << nested_arrays(100000) << "}\n";
    out << std::string(kMaxLineBytes + 5, 'x');  // no newline yet
  }
  MarksTail tail(path);
  EXPECT_TRUE(tail.poll(1.0).empty());
  EXPECT_EQ(tail.bad_lines(), 2u);
  {
    std::ofstream out(path, std::ios::binary | std::ios::app);
    out << "xxx\n"
        << R"({"mark": "ok", "t": 3})"
        << "\n";
  }
  const auto marks = tail.poll(2.0);
  ASSERT_EQ(marks.size(), 1u);
  EXPECT_EQ(marks[0].name, "ok");
  EXPECT_EQ(tail.bad_lines(), 2u);
}

TEST(ExitCodes, BadHeaderAndBadLineGiveTheSameCode) {
  const std::string bad_header = write_temp("bad-header.jsonl", "{oops\n");
  const std::string bad_line =
      write_temp("bad-line.jsonl", kHeader + "\n{oops\n" + R"({"t": 2, "gpu": 0})" + "\n");
  for (const char* cmd :
       {"stream --speed 0 --replay ", "diagnose --replay ", "report ", "top --once --replay "}) {
    EXPECT_EQ(run_gpulens(cmd + bad_header).exit_code, 1) << cmd;
    EXPECT_EQ(run_gpulens(cmd + bad_line).exit_code, 1) << cmd;
  }
}

TEST(ExitCodes, APathThatIsNoFileIsACommandLineError) {
  // Checked with the arguments, before anything is read: 2 like any other
  // wrong argument, for every command alike (docs/reliability.md).
  const std::string dir = ::testing::TempDir();
  for (const char* cmd :
       {"stream --speed 0 --replay ", "diagnose --replay ", "report ", "top --once --replay "}) {
    EXPECT_EQ(run_gpulens(std::string(cmd) += "/nonexistent/trace.jsonl").exit_code, 2) << cmd;
    EXPECT_EQ(run_gpulens(std::string(cmd) += dir).exit_code, 2) << cmd;
  }
}

}  // namespace
}  // namespace gpulens

namespace gpulens {
namespace {

TEST(InputLimits, JsonStringEndSkipsEscapesAndStopsAtTheEnd) {
  struct Case {
    std::string_view text;
    std::size_t open, end;
  };
  const Case cases[] = {
      {R"("abc")", 0, 4}, {R"(x "a\"b" y)", 2, 7}, {R"("a\\")", 0, 4},      {R"("a\\" "b")", 0, 4},
      {R"("abc)", 0, 4},  {R"("a\)", 0, 3},        {R"(["[", "{"])", 1, 3}, {R"("")", 0, 1},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(json_string_end(c.text, c.open), c.end) << c.text;
  }
  // Brackets inside strings do not nest.
  EXPECT_FALSE(json_nesting_exceeds(R"(["[[[[", "{{{{"])", 1));
  EXPECT_TRUE(json_nesting_exceeds(R"([["\"]", [1]])", 2));
}

}  // namespace
}  // namespace gpulens
