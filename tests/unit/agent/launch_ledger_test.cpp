// SPDX-License-Identifier: Apache-2.0
// The jobs' launch counts at the agent: each process's counts since its start become
// the launches new since its last send, fed to each GPU it holds, named where a kernel
// has a series; counts that go back are refused; the table is bounded.
#include "agent/launch_ledger.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "kernels/record/kernel_label.hpp"

namespace gpulens::agent {
namespace {

constexpr std::int64_t kAgentStart = 1'700'000'000'000'000'000;

kernels::LaunchRecord record(std::uint64_t gemm, std::uint64_t softmax, std::uint64_t unlisted,
                             std::uint64_t graphs = 0) {
  kernels::LaunchRecord r;
  r.pid = 1;  // what the datagram says; the ledger goes by the sender it is given
  r.first_ns = kAgentStart + 1'000'000'000;
  r.kernels = {{"gemm", gemm}, {"softmax", softmax}};
  std::erase_if(r.kernels, [](const auto& k) { return k.launches == 0; });
  r.unlisted_launches = unlisted;
  r.kernel_launches = gemm + softmax + unlisted;
  r.graph_launches = graphs;
  return r;
}

LaunchSender sender(std::uint32_t pid, std::vector<int> gpus = {0}) {
  LaunchSender s;
  s.pid = pid;
  s.start_ticks = 5000 + pid;
  s.gpus = std::move(gpus);
  return s;
}

const KernelSeriesRow* row(const std::vector<KernelSeriesRow>& rows, int gpu) {
  for (const auto& r : rows) {
    if (r.gpu == gpu) return &r;
  }
  return nullptr;
}

std::map<std::string, double> named(const KernelSeriesRow& r) {
  std::map<std::string, double> out;
  for (const auto& [label, n] : r.named_launches) out[label] = n;
  return out;
}

TEST(LaunchLedger, EachSendAddsOnlyWhatIsNew) {
  KernelSeries series;
  LaunchLedger ledger(&series, kAgentStart);
  EXPECT_EQ(ledger.take(sender(7), record(100, 50, 10, 3), 1), LaunchTake::Taken);
  EXPECT_EQ(ledger.take(sender(7), record(300, 60, 40, 5), 2), LaunchTake::Taken);
  EXPECT_EQ(ledger.take(sender(7), record(300, 60, 40, 5), 3), LaunchTake::Taken);  // the same
  const auto rows = series.rows(3);
  const KernelSeriesRow* r = row(rows, 0);
  ASSERT_NE(r, nullptr);
  EXPECT_TRUE(r->has_launches);
  EXPECT_FALSE(r->has_windows);
  EXPECT_DOUBLE_EQ(r->launches, 400);
  EXPECT_DOUBLE_EQ(r->graph_launches, 5);
  EXPECT_EQ(named(*r), (std::map<std::string, double>{{"gemm", 300}, {"softmax", 60}}));
  EXPECT_DOUBLE_EQ(r->other_launches, 40);
}

TEST(LaunchLedger, CountsThatGoBackAreRefusedAndChangeNothing) {
  KernelSeries series;
  LaunchLedger ledger(&series, kAgentStart);
  ASSERT_EQ(ledger.take(sender(7), record(100, 0, 0), 1), LaunchTake::Taken);
  EXPECT_EQ(ledger.take(sender(7), record(50, 0, 0), 2), LaunchTake::WentBack);
  EXPECT_EQ(ledger.take(sender(7), record(100, 0, 0, 0), 3), LaunchTake::Taken);
  kernels::LaunchRecord fewer_graphs = record(120, 0, 0, 0);
  ASSERT_EQ(ledger.take(sender(8), record(0, 0, 0, 9), 3), LaunchTake::Taken);
  EXPECT_EQ(ledger.take(sender(8), fewer_graphs, 4), LaunchTake::WentBack);
  const auto rows = series.rows(4);
  EXPECT_DOUBLE_EQ(row(rows, 0)->launches, 100);
  EXPECT_DOUBLE_EQ(row(rows, 0)->graph_launches, 9);
}

// Started before the agent: its first send only says where counting starts.
TEST(LaunchLedger, LaunchesMadeBeforeTheAgentStartedAreNotCounted) {
  KernelSeries series;
  LaunchLedger ledger(&series, kAgentStart);
  kernels::LaunchRecord before = record(1'000'000, 0, 0);
  before.first_ns = kAgentStart - 3'600'000'000'000;
  kernels::LaunchRecord later = record(1'000'250, 0, 0);
  later.first_ns = before.first_ns;
  EXPECT_EQ(ledger.take(sender(7), before, 1), LaunchTake::Taken);
  EXPECT_TRUE(series.rows(1).empty());
  EXPECT_EQ(ledger.take(sender(7), later, 2), LaunchTake::Taken);
  const auto rows = series.rows(2);
  EXPECT_DOUBLE_EQ(row(rows, 0)->launches, 250);
}

// A kernel that enters the process's most launched list late brings its whole count;
// its earlier launches were counted as other, so only its growth from here is its own.
// Named and other always add up to the launches.
TEST(LaunchLedger, AKernelListedLateStartsFromItsCountThen) {
  KernelSeries series;
  LaunchLedger ledger(&series, kAgentStart);
  ASSERT_EQ(ledger.take(sender(7), record(100, 0, 80), 1), LaunchTake::Taken);
  // softmax, 80 launches so far, now listed: 20 more of it and 0 others.
  ASSERT_EQ(ledger.take(sender(7), record(100, 80, 20), 2), LaunchTake::Taken);
  ASSERT_EQ(ledger.take(sender(7), record(100, 95, 20), 3), LaunchTake::Taken);
  const auto rows = series.rows(3);
  const KernelSeriesRow* r = row(rows, 0);
  ASSERT_NE(r, nullptr);
  EXPECT_DOUBLE_EQ(r->launches, 215);
  EXPECT_EQ(named(*r), (std::map<std::string, double>{{"gemm", 100}, {"softmax", 15}}));
  EXPECT_DOUBLE_EQ(r->other_launches, 100);
}

// A sender whose kernels claim more than its new launches gets no more than those.
TEST(LaunchLedger, NoKernelGetsMoreThanTheNewLaunches) {
  KernelSeries series;
  LaunchLedger ledger(&series, kAgentStart);
  ASSERT_EQ(ledger.take(sender(7), record(10, 10, 0), 1), LaunchTake::Taken);
  kernels::LaunchRecord lie = record(1000, 1000, 0);
  lie.kernel_launches = 25;  // 5 new, while its kernels say 1980
  lie.unlisted_launches = 0;
  ASSERT_EQ(ledger.take(sender(7), lie, 2), LaunchTake::Taken);
  const auto rows = series.rows(2);
  const KernelSeriesRow* r = row(rows, 0);
  double sum = r->other_launches;
  for (const auto& [label, n] : r->named_launches) sum += n;
  EXPECT_DOUBLE_EQ(r->launches, 25);
  EXPECT_DOUBLE_EQ(sum, 25);
}

TEST(LaunchLedger, EachGpuOfTheProcessIsFedAllItsLaunchesWithItsPod) {
  KernelSeries series;
  LaunchLedger ledger(&series, kAgentStart);
  LaunchSender two = sender(7, {0, 3});
  two.kube[3] = sources::KubeRef{"ml", "trainer-0", "main"};
  ASSERT_EQ(ledger.take(two, record(40, 2, 0), 1), LaunchTake::Taken);
  const auto rows = series.rows(1);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_DOUBLE_EQ(row(rows, 0)->launches, 42);
  EXPECT_TRUE(row(rows, 0)->pod.pod.empty());
  EXPECT_DOUBLE_EQ(row(rows, 3)->launches, 42);
  EXPECT_EQ(row(rows, 3)->pod.pod, "trainer-0");
}

// A pid given to a new process is a new process (its start time differs).
TEST(LaunchLedger, TheTableIsBoundedAndAReusedPidStartsAfresh) {
  LaunchLedger ledger(nullptr, kAgentStart, 2);
  EXPECT_EQ(ledger.take(sender(1), record(5, 0, 0), 1), LaunchTake::Taken);
  EXPECT_EQ(ledger.take(sender(2), record(5, 0, 0), 1), LaunchTake::Taken);
  EXPECT_EQ(ledger.take(sender(3), record(5, 0, 0), 1), LaunchTake::Full);
  EXPECT_EQ(ledger.take(sender(1), record(6, 0, 0), 2), LaunchTake::Taken);  // known: taken
  ledger.forget_if([](std::uint32_t pid, std::uint64_t) { return pid == 2; });
  EXPECT_EQ(ledger.processes(), 1u);
  LaunchSender reused = sender(1);
  reused.start_ticks += 1;
  EXPECT_EQ(ledger.take(reused, record(1, 0, 0), 3), LaunchTake::Taken)
      << "fewer than pid 1's last, but another process";
}

// Forgotten (away from the GPUs a while) and back: its totals were kept, so only what
// it launched since its last send counts, as other this once (its kernels' counts were
// not kept), then named again.
TEST(LaunchLedger, AProcessForgottenAndBackIsNotCountedTwice) {
  KernelSeries series;
  LaunchLedger ledger(&series, kAgentStart);
  ASSERT_EQ(ledger.take(sender(7), record(100, 50, 0, 4), 1), LaunchTake::Taken);
  ledger.forget_if([](std::uint32_t, std::uint64_t) { return true; });
  EXPECT_EQ(ledger.processes(), 0u);
  EXPECT_EQ(ledger.take(sender(7), record(90, 50, 0), 2), LaunchTake::WentBack)
      << "its kept totals still hold it to adding up";
  ASSERT_EQ(ledger.take(sender(7), record(130, 60, 0, 6), 3), LaunchTake::Taken);
  ASSERT_EQ(ledger.take(sender(7), record(140, 60, 0, 6), 4), LaunchTake::Taken);
  const auto rows = series.rows(4);
  const KernelSeriesRow* r = row(rows, 0);
  ASSERT_NE(r, nullptr);
  EXPECT_DOUBLE_EQ(r->launches, 200);
  EXPECT_DOUBLE_EQ(r->graph_launches, 6);
  EXPECT_EQ(named(*r), (std::map<std::string, double>{{"gemm", 110}, {"softmax", 50}}));
  EXPECT_DOUBLE_EQ(r->other_launches, 40);
}

// What is kept of forgotten processes is bounded: the oldest go first, and one of those
// that sends again is a new process to the ledger.
TEST(LaunchLedger, ForgottenTotalsAreBounded) {
  KernelSeries series;
  LaunchLedger ledger(&series, kAgentStart);
  const auto pids = static_cast<std::uint32_t>(kLaunchLedgerForgotten + 1);
  for (std::uint32_t pid = 1; pid <= pids; ++pid) {
    ASSERT_EQ(ledger.take(sender(pid), record(10, 0, 0), 1), LaunchTake::Taken);
    ledger.forget_if([](std::uint32_t, std::uint64_t) { return true; });
  }
  // pid 1 went first: back with 12 launches, all 12 count; the last pid's 2 new ones.
  ASSERT_EQ(ledger.take(sender(1), record(12, 0, 0), 2), LaunchTake::Taken);
  ASSERT_EQ(ledger.take(sender(pids), record(12, 0, 0), 2), LaunchTake::Taken);
  EXPECT_DOUBLE_EQ(row(series.rows(2), 0)->launches, 10.0 * pids + 12 + 2);
}

}  // namespace
}  // namespace gpulens::agent
