// SPDX-License-Identifier: Apache-2.0
// The job recorder (job_recorder.cpp) on a scripted recording: the trace it
// writes (samples, the source's and the job's marks between job_start and
// job_end) and the job record (which GPUs, and on what basis).
#include "jobs/job_recorder.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <deque>
#include <string>

#include "core/trace_reader.hpp"

namespace gpulens::jobs {
namespace {

// A recording of three ticks a second apart on GPUs 0 and 1; tick 11 carries a mark.
class ScriptedTicks final : public sources::TickSource {
 public:
  ScriptedTicks() {
    header_.host = "node1";
    header_.interval_s = 1;
    for (int gpu : {0, 1}) {
      DeviceInfo d;
      d.index = gpu;
      d.name = "test GPU";
      header_.devices.push_back(d);
    }
    for (double t : {10.0, 11.0, 12.0}) {
      Tick tick;
      tick.t = t;
      for (int gpu : {0, 1}) {
        Sample s;
        s.t = t;
        s.gpu = gpu;
        s.values.set(Metric::GpuUtil, 50);
        tick.samples.push_back(s);
      }
      if (t == 11.0) tick.marks.push_back(Mark{11.0, "phase"});
      ticks_.push_back(tick);
    }
  }
  const TraceHeader& header() const override { return header_; }
  Result<std::optional<Tick>> next() override {
    if (ticks_.empty()) return std::optional<Tick>{};
    Tick t = ticks_.front();
    ticks_.pop_front();
    return std::optional<Tick>{std::move(t)};
  }
  void stop() override {}
  bool live() const override { return false; }

 private:
  TraceHeader header_;
  std::deque<Tick> ticks_;
};

std::string recorder_trace(const std::string& name) {
  return ::testing::TempDir() + "/job_recorder_" + std::to_string(getpid()) + "_" + name + ".jsonl";
}

std::vector<std::string> mark_names(const Trace& trace) {
  std::vector<std::string> names;
  for (const auto& m : trace.marks) names.push_back(m.name);
  return names;
}

ChildExit exited_with(int code) {
  ChildExit e;
  e.code = code;
  return e;
}

TEST(JobRecorder, AReplayedJobIsRecordedWholeBetweenItsMarks) {
  RecorderOptions o;
  o.trace_path = recorder_trace("replay");
  o.drain_replay = true;
  o.inbox = std::make_shared<MarkInbox>();
  o.inbox->push(Mark{0, "step"});  // a replay stamps it with its own "now"
  auto rec = JobRecorder::open(std::make_unique<ScriptedTicks>(), o);
  ASSERT_TRUE(rec) << rec.error().message;
  (*rec)->begin(JobStart{"python train.py", 4242, 5000});
  const auto job = (*rec)->finish(exited_with(3), {}, "");
  ASSERT_TRUE(job) << job.error().message;
  EXPECT_TRUE(job->present);
  EXPECT_EQ(job->command, "python train.py");
  EXPECT_EQ(job->pid, 4242);
  EXPECT_EQ(job->exit_code, 3);
  EXPECT_EQ(job->gpus, (std::vector<int>{0, 1}));
  EXPECT_EQ(job->gpus_basis, "all");
  EXPECT_EQ(job->start, 10.0);
  EXPECT_EQ(job->end, 12.0);

  const auto trace = read_trace(o.trace_path);
  ASSERT_TRUE(trace) << trace.error().message;
  EXPECT_EQ(trace->header.host, "node1");
  EXPECT_EQ(trace->samples.size(), 6U);
  EXPECT_EQ(mark_names(*trace),
            (std::vector<std::string>{"job_start", "step", "phase", "job_end"}));
  EXPECT_EQ(trace->marks.front().t, 9.0);  // the first interval's start
  EXPECT_EQ(trace->marks[1].t, 10.0);
  const JobRecord read_back = job_from_marks(trace->marks);
  EXPECT_EQ(read_back.exit_code, 3);
  EXPECT_EQ(read_back.gpus_basis, "all");
}

TEST(JobRecorder, GpusChosenByTheUserAreTheJobs) {
  RecorderOptions o;
  o.trace_path = recorder_trace("chosen");
  o.drain_replay = true;
  auto rec = JobRecorder::open(std::make_unique<ScriptedTicks>(), o);
  ASSERT_TRUE(rec) << rec.error().message;
  (*rec)->begin(JobStart{"job", 1, 5000});
  const auto job = (*rec)->finish(exited_with(0), {1}, "");
  ASSERT_TRUE(job) << job.error().message;
  EXPECT_EQ(job->gpus, (std::vector<int>{1}));
  EXPECT_EQ(job->gpus_basis, "--gpus");
}

TEST(JobRecorder, WithoutASourceTheTraceSaysWhyNothingWasMeasured) {
  RecorderOptions o;
  o.trace_path = recorder_trace("nosource");
  o.host = "laptop";
  auto rec = JobRecorder::open(nullptr, o);
  ASSERT_TRUE(rec) << rec.error().message;
  (*rec)->begin(JobStart{"job", 7, 1000});
  ChildExit killed;
  killed.signal = 9;
  const auto job = (*rec)->finish(killed, {}, "no NVIDIA driver");
  ASSERT_TRUE(job) << job.error().message;
  EXPECT_TRUE(job->gpus.empty());
  EXPECT_EQ(job->gpus_basis, "");
  EXPECT_EQ(job->signal, 9);
  EXPECT_EQ(job->start, 1000.0);
  ASSERT_TRUE(job->end.has_value());
  EXPECT_GE(*job->end, 1000.0);

  const auto trace = read_trace(o.trace_path);
  ASSERT_TRUE(trace) << trace.error().message;
  EXPECT_EQ(trace->header.host, "laptop");
  EXPECT_TRUE(trace->samples.empty());
  EXPECT_EQ(mark_names(*trace), (std::vector<std::string>{"job_start", "job_end"}));
  EXPECT_EQ(trace->marks.front().t, 1000.0);
  EXPECT_EQ(job_from_marks(trace->marks).not_measured, "no NVIDIA driver");
}

TEST(JobRecorder, ATraceThatCannotBeCreatedIsAnError) {
  RecorderOptions o;
  o.trace_path = ::testing::TempDir() + "/no_such_dir_job_recorder/x/trace.jsonl";
  EXPECT_FALSE(JobRecorder::open(nullptr, o));
}

}  // namespace
}  // namespace gpulens::jobs
