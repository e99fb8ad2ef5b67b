// SPDX-License-Identifier: Apache-2.0
// The job marks `gpulens run` writes into its recording and every reader takes
// back: start and end, the exit status, the GPUs and why, the marks file's
// problems and what the job said on stderr about memory; fields of the wrong
// type or out of range read as absent, and the job's words come back safe.
#include "core/job_marks.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace gpulens {
namespace {

TEST(RunJobMarks, RoundTripThroughMarks) {
  JobRecord job;
  job.exit_code = 0;
  job.signal = 15;
  job.gpus = {0, 3};
  job.gpus_basis = "processes";
  std::vector<Mark> marks = {job_start_mark(10, "python train.py", 42), job_end_mark(70, job)};
  const JobRecord back = job_from_marks(marks);
  EXPECT_TRUE(back.present);
  EXPECT_EQ(back.command, "python train.py");
  EXPECT_EQ(back.pid, 42);
  EXPECT_EQ(back.start, 10);
  EXPECT_EQ(back.end, 70);
  EXPECT_EQ(back.gpus, (std::vector<int>{0, 3}));
  EXPECT_EQ(back.exit_status(), 143);
  EXPECT_EQ(join_command({"python", "-c", "print('a b')", "x=1"}),
            "python -c 'print('\\''a b'\\'')' x=1");
}

TEST(RunJobMarks, WhatTheJobSaidAboutMemoryRoundTrips) {
  JobRecord job;
  job.exit_code = 1;
  job.not_measured = "";
  job.marks_skipped = 3;
  job.marks_problem = "not a regular file (a FIFO)";
  job.stderr_scan.state = "read";
  job.stderr_scan.oom_message = "torch.OutOfMemoryError: CUDA out of memory.";
  job.stderr_scan.oom_source = "pytorch";
  job.stderr_scan.oom_tried_mib = 2048;
  job.stderr_scan.oom_free_mib = 512.5;
  job.stderr_scan.oom_capacity_mib = 81559;
  const JobRecord back = job_from_marks({job_end_mark(5, job)});
  EXPECT_TRUE(back.present);
  EXPECT_FALSE(back.start.has_value()) << "no job_start mark";
  EXPECT_EQ(back.exit_status(), 1);
  EXPECT_EQ(back.marks_skipped, 3u);
  EXPECT_EQ(back.marks_problem, "not a regular file (a FIFO)");
  EXPECT_TRUE(back.stderr_scan.read());
  EXPECT_EQ(back.stderr_scan.oom_message, job.stderr_scan.oom_message);
  EXPECT_EQ(back.stderr_scan.oom_source, "pytorch");
  EXPECT_EQ(back.stderr_scan.oom_tried_mib, 2048);
  EXPECT_EQ(back.stderr_scan.oom_free_mib, 512.5);
  EXPECT_EQ(back.stderr_scan.oom_capacity_mib, 81559);
  EXPECT_FALSE(job_from_marks({}).present);
  EXPECT_EQ(JobRecord{}.exit_status(), 0) << "no status known reads as success";
}

TEST(RunJobMarks, FieldsOfTheWrongTypeOrRangeReadAsAbsent) {
  Mark end;
  end.t = 9;
  end.name = kJobEndMark;
  end.fields = nlohmann::json::parse(R"({"exit_code": "1", "signal": null, "gpus": [0, "1", 2.5, 3],
    "marks_skipped": -4, "stderr_scan": 7, "oom_tried_mib": -1, "oom_free_mib": "12",
    "oom_source": "py\u001b[31mtorch"})");
  const JobRecord back = job_from_marks({end});
  EXPECT_FALSE(back.exit_code.has_value());
  EXPECT_FALSE(back.signal.has_value());
  EXPECT_EQ(back.gpus, (std::vector<int>{0, 3}));
  EXPECT_EQ(back.marks_skipped, 0u);
  EXPECT_EQ(back.stderr_scan.state, "");
  EXPECT_FALSE(back.stderr_scan.oom_tried_mib.has_value());
  EXPECT_FALSE(back.stderr_scan.oom_free_mib.has_value());
  EXPECT_EQ(back.stderr_scan.oom_source.find('\x1b'), std::string::npos)
      << "a recording comes from anywhere: its words are made safe on the way in";
}

TEST(RunJobMarks, AnOutOfMemoryLineIsOneBoundedLineCutAtACharacter) {
  EXPECT_EQ(oom_message_text("CUDA out of memory"), "CUDA out of memory");
  EXPECT_EQ(oom_message_text("a\nb").find('\n'), std::string::npos);
  // 511 ASCII bytes, then a two-byte character across the limit: cut before it.
  const std::string line = std::string(kOomMessageMax - 1, 'x') + "\xc3\xa9" + "tail";
  const std::string kept = oom_message_text(line);
  EXPECT_EQ(kept, std::string(kOomMessageMax - 1, 'x') + "...");
  EXPECT_EQ(oom_message_text(std::string(kOomMessageMax, 'y')), std::string(kOomMessageMax, 'y'));
}

TEST(RunJobMarks, ACommandIsQuotedOnlyWhereAShellNeedsIt) {
  EXPECT_EQ(join_command({}), "");
  EXPECT_EQ(join_command({"torchrun", "--nproc=8", "train.py", "lr=3e-4,bs@64"}),
            "torchrun --nproc=8 train.py lr=3e-4,bs@64");
  EXPECT_EQ(join_command({"echo", "", "a b", "$HOME"}), "echo '' 'a b' '$HOME'");
}

}  // namespace
}  // namespace gpulens
