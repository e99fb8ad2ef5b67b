// SPDX-License-Identifier: Apache-2.0
// The recording as it is written: the header first, each line whole on disk as
// soon as it is written (a crash leaves at most one partial line), a tick's
// marks before its samples, and a writer that cannot write, or was closed, says so.
#include "core/trace_writer.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/trace_reader.hpp"

namespace gpulens {
namespace {

std::string writer_path(const std::string& name) {
  return ::testing::TempDir() + "/gpulens-trace-writer-" + name;
}

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TraceHeader one_gpu_header() {
  TraceHeader h;
  h.host = "node-1";
  h.interval_s = 0.5;
  DeviceInfo d;
  d.index = 0;
  d.uuid = "GPU-1";
  d.name = "NVIDIA H100 80GB HBM3";
  h.devices.push_back(d);
  return h;
}

TEST(TraceWriter, EachLineIsOnDiskOnceWritten) {
  const std::string path = writer_path("lines.jsonl");
  auto writer = TraceWriter::open(path, one_gpu_header());
  ASSERT_TRUE(writer) << writer.error().message;
  EXPECT_EQ(lines_of(path).size(), 1u) << "the header, before any sample";
  Sample s;
  s.t = 100.5;
  s.gpu = 0;
  s.values.set(Metric::GpuUtil, 42);
  ASSERT_TRUE(writer->write(s));
  const auto lines = lines_of(path);  // read while the writer is still open
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NE(lines[1].find("\"gpu_util\": 42"), std::string::npos) << lines[1];
  writer->close();
  auto back = read_trace(path);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->header.host, "node-1");
  EXPECT_EQ(back->header.devices.at(0).uuid, "GPU-1");
  ASSERT_EQ(back->samples.size(), 1u);
  EXPECT_EQ(back->samples[0].get(Metric::GpuUtil), 42);
}

TEST(TraceWriter, ATicksMarksComeBeforeItsSamples) {
  const std::string path = writer_path("tick.jsonl");
  {
    auto writer = TraceWriter::open(path, one_gpu_header());
    ASSERT_TRUE(writer);
    Tick tick;
    tick.t = 10;
    Sample s;
    s.t = 10;
    s.gpu = 0;
    s.values.set(Metric::SmActive, 80);
    tick.samples.push_back(s);
    Mark m;
    m.t = 9.5;
    m.name = "train:start";
    tick.marks.push_back(m);
    ASSERT_TRUE(writer->write(tick));
  }
  const auto lines = lines_of(path);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_NE(lines[1].find("train:start"), std::string::npos) << lines[1];
  EXPECT_NE(lines[2].find("sm_active"), std::string::npos) << lines[2];
  auto back = read_trace(path);
  ASSERT_TRUE(back) << back.error().message;
  ASSERT_EQ(back->marks.size(), 1u);
  EXPECT_EQ(back->marks[0].name, "train:start");
  EXPECT_EQ(back->marks[0].t, 9.5);
}

TEST(TraceWriter, WhatCannotBeWrittenIsSaid) {
  const auto nowhere = TraceWriter::open("/nonexistent/gpulens/t.jsonl", one_gpu_header());
  ASSERT_FALSE(nowhere);
  EXPECT_EQ(nowhere.error().message,
            "/nonexistent/gpulens/t.jsonl: cannot write: No such file or directory");
  auto writer = TraceWriter::open(writer_path("closed.jsonl"), one_gpu_header());
  ASSERT_TRUE(writer);
  writer->close();
  const Status after = writer->write(Mark{});
  ASSERT_FALSE(after);
  EXPECT_EQ(after.error().message, writer_path("closed.jsonl") + ": writer is closed");
  EXPECT_TRUE(writer->flush()) << "flushing a closed writer has nothing to do";
  // A moved-from writer holds no file: closing it twice is harmless.
  TraceWriter moved = std::move(*writer);
  writer->close();
  moved.close();
}

}  // namespace
}  // namespace gpulens
