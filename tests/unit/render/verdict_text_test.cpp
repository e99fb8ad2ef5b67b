// SPDX-License-Identifier: Apache-2.0
// The verdict in words for a terminal: the headline says how the job ended, a
// verdict with nothing measured says only that and its notes, a measured one has
// its sections in the order people read them, and no control in a name reaches
// the terminal. (The whole text of the reference recordings: verdict_golden_test.)
#include <gtest/gtest.h>

#include <string>

#include "render/verdict_output.hpp"
#include "verdict/verdict.hpp"

namespace gpulens::render {
namespace {

verdict::Verdict unmeasured_job(const std::string& command) {
  verdict::Verdict v;
  v.job.present = true;
  v.job.command = command;
  v.duration_s = 78;
  return v;
}

TEST(VerdictText, TheFirstLineSaysHowTheJobEnded) {
  verdict::Verdict v = unmeasured_job("python train.py --lr 1e-4");
  EXPECT_EQ(verdict_to_text(v), "gpulens: `python train.py --lr 1e-4` ran after 1m 18s\n");
  v.job.exit_code = 3;
  EXPECT_EQ(verdict_to_text(v),
            "gpulens: `python train.py --lr 1e-4` exited with code 3 after 1m 18s\n");
  v.job.signal = 9;
  EXPECT_EQ(verdict_to_text(v),
            "gpulens: `python train.py --lr 1e-4` was killed by signal 9 (SIGKILL) after 1m 18s\n");
}

TEST(VerdictText, NothingMeasuredSaysTheHeadlineAndTheNotesOnly) {
  verdict::Verdict v;
  v.host = "node7";
  v.headline.push_back({"idle", "No GPU was sampled.", std::nullopt});
  v.headline.push_back({"idle", "The second line.", std::nullopt});
  v.notes = {"the recording ends early"};
  EXPECT_EQ(verdict_to_text(v),
            "gpulens: recording of node7\n"
            "  verdict  No GPU was sampled.\n"
            "           The second line.\n"
            "\n"
            "  note: the recording ends early\n");
  EXPECT_EQ(verdict_to_text(verdict::Verdict{}), "gpulens: recording\n");
}

TEST(VerdictText, NoControlInANameReachesTheTerminal) {
  verdict::Verdict v = unmeasured_job("evil\x1b]0;owned\x07\ncommand");
  v.notes = {"a note \x1b[2J"};
  const std::string t = verdict_to_text(v);
  EXPECT_EQ(t.find('\x1b'), std::string::npos) << t;
  EXPECT_EQ(t.find('\x07'), std::string::npos) << t;
  EXPECT_EQ(t.find("\ncommand"), std::string::npos) << t;  // the command stays on its line
  EXPECT_NE(t.find("a note "), std::string::npos) << t;
}

TEST(VerdictText, AMeasuredVerdictHasItsSectionsInOrder) {
  auto trace = read_trace(std::string(GPULENS_FIXTURES) + "/traces/training-h100.trace.jsonl",
                          TraceReadOptions{.lenient = true});
  ASSERT_TRUE(trace) << trace.error().message;
  verdict::VerdictOptions o;
  o.peak_tflops = 989.4;
  o.price_per_gpu_hour = 2.5;
  const std::string t = verdict_to_text(verdict::build_verdict(*trace, o));
  std::size_t at = 0;
  for (const char* part : {
           "gpulens: recording of vm, 1m 18s\n  verdict  ",
           "  GPUs     1 × NVIDIA H100 80GB HBM3 (GPU 0)\n",
           "  time     0.0216 GPU-hours",
           "\n  Per GPU (means over the recording; memory at its peak)\n",
           "\n  Utilization funnel (share of the GPU time paid for)\n",
           "    kernel-active  52.1 %",
           "\n  What the GPUs were doing (share of time; of the steady state)\n",
           "\n  Fixes that matter most\n    1. ",
           "\n  Cost at $2.50 per GPU-hour",
           "\n  MFU (bf16 dense peak 989.4 TFLOP/s × 1 GPU)\n",
           "\n  Phases\n",
           "    train_dataloader_starved ",
           "\n  note: ",
       }) {
    const auto found = t.find(part, at);
    ASSERT_NE(found, std::string::npos) << "missing or out of order: " << part << "\n" << t;
    at = found;
  }
}

}  // namespace
}  // namespace gpulens::render
