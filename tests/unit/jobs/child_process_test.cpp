// SPDX-License-Identifier: Apache-2.0
// The child-process runner and the job's process tree, without the binary: exit
// codes, signals, exec failures, stdout lines through the pipe (the job marks:
// core/job_marks_test.cpp).
#include "jobs/child_process.hpp"

#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <cerrno>
#include <memory>
#include <mutex>

#include "jobs/process_tree.hpp"

namespace gpulens::jobs {
namespace {

ProcessSample proc(std::uint32_t pid) {
  ProcessSample p;
  p.pid = pid;
  return p;
}

ChildExit run(std::vector<std::string> argv) {
  ChildOptions o;
  o.argv = std::move(argv);
  auto child = ChildProcess::spawn(std::move(o));
  if (!child) throw std::runtime_error(child.error().message);
  return child->wait();
}

TEST(RunChild, ExitCodesAndSignalsPassThrough) {
  EXPECT_EQ(run({"true"}).status(), 0);
  const auto failed = run({"sh", "-c", "exit 3"});
  EXPECT_EQ(failed.code, 3);
  EXPECT_EQ(failed.status(), 3);
  const auto killed = run({"sh", "-c", "kill -KILL $$"});
  EXPECT_EQ(killed.signal, SIGKILL);
  EXPECT_EQ(killed.status(), 128 + SIGKILL);
}

TEST(RunChild, AMissingCommandIsAnErrorWithTheShellsCode) {
  ChildOptions o;
  o.argv = {"gpulens-no-such-command"};
  int err = 0;
  auto child = ChildProcess::spawn(o, &err);
  ASSERT_FALSE(child);
  EXPECT_EQ(err, ENOENT);
  EXPECT_EQ(exit_code_for_exec_errno(err), 127);
  EXPECT_NE(child.error().message.find("gpulens-no-such-command"), std::string::npos);
  o.argv = {"/dev/null"};  // exists, not executable
  ASSERT_FALSE(ChildProcess::spawn(o, &err));
  EXPECT_EQ(exit_code_for_exec_errno(err), 126);
}

TEST(RunChild, EnvironmentIsAddedToOurs) {
  ChildOptions o;
  o.argv = {"sh", "-c", "test \"$GPULENS_MARKS\" = /x/y && test -n \"$PATH\""};
  o.env = {{"GPULENS_MARKS", "/x/y"}};
  auto child = ChildProcess::spawn(o);
  ASSERT_TRUE(child);
  EXPECT_EQ(child->wait().status(), 0);
}

TEST(RunChild, StdoutLinesReachTheCallbackInOrder) {
  std::mutex m;
  std::vector<std::string> lines;
  ChildOptions o;
  o.argv = {"sh", "-c", "printf 'a\\nbb\\n'; printf 'no newline'"};
  o.on_stdout_line = [&](std::string_view line) {
    std::lock_guard lock(m);
    lines.emplace_back(line);
  };
  // Our own stdout is the test's: point it at /dev/null while the child writes.
  const int saved = dup(STDOUT_FILENO);
  FILE* null = std::fopen("/dev/null", "w");
  dup2(fileno(null), STDOUT_FILENO);
  auto child = ChildProcess::spawn(o);
  ASSERT_TRUE(child);
  const auto exit = child->wait();
  dup2(saved, STDOUT_FILENO);
  close(saved);
  std::fclose(null);
  EXPECT_EQ(exit.status(), 0);
  std::lock_guard lock(m);
  EXPECT_EQ(lines, (std::vector<std::string>{"a", "bb", "no newline"}));
}

// Through the stderr relay (a pipe here: the test's stderr is not a terminal
// under ctest, and is pointed at /dev/null): the same statuses, every byte seen.
TEST(RunChild, TheStderrRelayChangesNoStatusAndSeesEveryByte) {
  const int saved = dup(STDERR_FILENO);
  FILE* null = std::fopen("/dev/null", "w");
  dup2(fileno(null), STDERR_FILENO);
  const auto relayed = [](std::vector<std::string> argv, std::string& seen) {
    auto got = std::make_shared<std::string>();
    auto m = std::make_shared<std::mutex>();
    ChildOptions o;
    o.argv = std::move(argv);
    o.on_stderr = [got, m](std::string_view bytes) {
      std::lock_guard lock(*m);
      got->append(bytes);
    };
    auto child = ChildProcess::spawn(std::move(o));
    if (!child) throw std::runtime_error(child.error().message);
    const ChildExit exit = child->wait();
    std::lock_guard lock(*m);
    seen = *got;
    return exit;
  };
  std::string seen, seen_killed;
  const auto failed = relayed({"sh", "-c", "printf 'a\\000b\\n' >&2; exit 3"}, seen);
  const auto killed = relayed({"sh", "-c", "echo bye >&2; kill -KILL $$"}, seen_killed);
  dup2(saved, STDERR_FILENO);
  close(saved);
  std::fclose(null);
  EXPECT_EQ(failed.code, 3);
  EXPECT_EQ(failed.stderr_state, "read");
  EXPECT_EQ(seen, std::string("a\0b\n", 4));
  EXPECT_EQ(killed.signal, SIGKILL);
  EXPECT_EQ(killed.status(), 128 + SIGKILL);
  EXPECT_EQ(seen_killed, "bye\n");
  EXPECT_EQ(run({"true"}).stderr_state, "");  // not asked for: inherited
}

TEST(RunProcessTree, DescendantsFollowParentLinks) {
  const std::vector<std::pair<std::uint32_t, std::uint32_t>> links = {{10, 1}, {11, 10}, {12, 11},
                                                                      {13, 1}, {14, 12}, {15, 99}};
  EXPECT_EQ(descendants(links, 10), (std::set<std::uint32_t>{10, 11, 12, 14}));
  EXPECT_EQ(descendants(links, 42), (std::set<std::uint32_t>{42}));
  // The live /proc: a child of ours is in our tree.
  ChildOptions o;
  o.argv = {"sleep", "30"};
  auto child = ChildProcess::spawn(o);
  ASSERT_TRUE(child);
  const auto self = static_cast<std::uint32_t>(getpid());
  EXPECT_EQ(process_tree("/proc", self).count(static_cast<std::uint32_t>(child->pid())), 1u);
  child->kill(SIGTERM);
  EXPECT_EQ(child->wait().signal, SIGTERM);
  EXPECT_EQ(process_tree("/nonexistent", self), (std::set<std::uint32_t>{self}));
}

TEST(RunProcessTree, GpusUsedByTheJob) {
  std::vector<Sample> samples(3);
  for (int g = 0; g < 3; ++g) {
    samples[g].gpu = g;
    samples[g].procs.emplace();
  }
  samples[0].procs->push_back(proc(100));
  samples[2].procs->push_back(proc(200));
  EXPECT_EQ(gpus_used_by(samples, {100, 101}), (std::set<int>{0}));
}

}  // namespace
}  // namespace gpulens::jobs
