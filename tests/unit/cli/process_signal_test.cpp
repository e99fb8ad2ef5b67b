// SPDX-License-Identifier: Apache-2.0
// `gpulens top`'s signals: a replay can signal nothing, whatever the keys; live, a
// signal reaches only the process that was listed (same start time and name, when
// asked and just before sending). Fixture procfs trees stand in for /proc with a fake
// kernel that records what would be sent; the one real signal goes to a child this
// test started.
#include "cli/process_signal.hpp"

#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "sampler/open_source.hpp"
#include "tui/top_model.hpp"
#include "tui/view_state.hpp"

extern char** environ;

namespace gpulens::cli {
namespace {

namespace fs = std::filesystem;
using tui::KeyAction;
using tui::PendingSignal;
using tui::ViewState;

const std::string kMultiGpu =
    std::string(GPULENS_SOURCE_DIR) + "/tests/fixtures/traces/multi-gpu-h200x2.trace.jsonl";

// Records every call; sends nothing.
class FakeKernel final : public SignalKernel {
 public:
  int may_signal(std::uint32_t pid) override {
    calls.push_back("may_signal " + std::to_string(pid));
    return may_signal_errno;
  }
  int pidfd_open(std::uint32_t pid) override {
    calls.push_back("pidfd_open " + std::to_string(pid));
    if (on_open) on_open();
    return open_result;
  }
  int pidfd_send(int fd, int signal) override {
    calls.push_back("pidfd_send " + std::to_string(fd) + " " + std::to_string(signal));
    return 0;
  }
  int kill(std::uint32_t pid, int signal) override {
    calls.push_back("kill " + std::to_string(pid) + " " + std::to_string(signal));
    return 0;
  }
  void close(int fd) override { calls.push_back("close " + std::to_string(fd)); }
  bool sent() const {
    for (const auto& c : calls) {
      if (c.rfind("pidfd_send", 0) == 0 || c.rfind("kill", 0) == 0) return true;
    }
    return false;
  }

  std::vector<std::string> calls;
  int may_signal_errno = 0;
  int open_result = 7;
  std::function<void()> on_open;
};

// A copy of tests/fixtures/proc/t0 that a test may change (t1 laid over it: PID 1003
// reused by another process).
class TempProc {
 public:
  TempProc() {
    std::string tmpl = (fs::temp_directory_path() / "gpulens-topsig-XXXXXX").string();
    root_ = ::mkdtemp(tmpl.data());
    overlay("t0");
  }
  ~TempProc() {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  void overlay(const std::string& tree) {
    fs::copy(fs::path(GPULENS_FIXTURES) / "proc" / tree, root_,
             fs::copy_options::recursive | fs::copy_options::overwrite_existing);
  }
  void write(const std::string& rel, const std::string& text) {
    std::ofstream(fs::path(root_) / rel, std::ios::trunc) << text;
  }
  void remove(const std::string& rel) { fs::remove_all(fs::path(root_) / rel); }
  const std::string& root() const { return root_; }

 private:
  std::string root_;
};

// A live stand-in: make_process_signaller() only asks whether the source is live.
class LiveSource final : public sources::TickSource {
 public:
  const TraceHeader& header() const override { return header_; }
  Result<std::optional<Tick>> next() override { return std::optional<Tick>{}; }
  void stop() override {}
  bool live() const override { return true; }

 private:
  TraceHeader header_;
};

// The process as top listed it: its start time and name read from `root`.
PendingSignal listed(const std::string& root, std::uint32_t pid, int sig = SIGTERM) {
  PendingSignal s;
  s.pid = pid;
  s.signal = sig;
  const auto id = read_process_identity(root, pid);
  EXPECT_TRUE(id) << (id ? "" : id.error().message);
  if (id) {
    s.start_ticks = id->start_ticks;
    s.listed_name = id->comm;
    s.command = id->comm + " --listed-command-line";
  }
  return s;
}

std::unique_ptr<tui::ProcessSignaller> live(const std::string& root,
                                            std::shared_ptr<SignalKernel> kernel) {
  LiveSource source;
  return make_process_signaller(source, root, std::move(kernel));
}

TEST(TopSignals, AReplayHasNoSignallerAndItsKeysNeverReachTheKernel) {
  sampler::SourceOptions so;
  so.replay = kMultiGpu;
  so.speed = 0;
  auto source = sampler::open_tick_source(so);
  ASSERT_TRUE(source) << source.error().message;
  auto kernel = std::make_shared<FakeKernel>();
  auto signaller = make_process_signaller(**source, "/proc", kernel);
  EXPECT_TRUE(signaller == nullptr);

  // The recording's processes 300 ticks in, as top lists them (PIDs 594 and 595
  // could be anyone's here).
  tui::ModelBuilder builder((*source)->header(), 10);
  while (builder.ticks() < 300) {
    auto tick = (*source)->next();
    ASSERT_TRUE(tick);
    if (!tick->has_value()) break;
    builder.on_tick(**tick, nullptr);
  }
  ASSERT_FALSE(builder.model().procs.empty());
  ViewState view;
  view.signals_off = tui::kReplayNoSignals;  // as cmd_top sets it without a signaller
  const auto visible = tui::visible_processes(builder.model().procs, view);
  for (int k : {int{tui::key::kDown}, int{'T'}, int{'y'}, int{'K'}, int{'y'}, int{'I'}, int{'Y'}}) {
    const KeyAction action = tui::handle_key(view, k, visible);
    EXPECT_NE(action.kind, KeyAction::Signal);
    tui::follow_through(view, action, signaller.get());
    EXPECT_FALSE(view.confirm);
    if (k != 'y' && k != 'Y' && k != tui::key::kDown) {
      EXPECT_EQ(view.message, "replay: the processes are a recording's, not this machine's");
    }
  }
  // Even a confirmed signal handed straight to the sending step goes nowhere.
  view.signals_off.clear();
  tui::follow_through(view,
                      {KeyAction::Signal, PendingSignal{visible[0].pid, 0, SIGKILL, "x", "x", 1}},
                      signaller.get());
  EXPECT_EQ(view.message, tui::kReplayNoSignals);
  EXPECT_TRUE(kernel->calls.empty());
}

TEST(TopSignals, ALiveSourceAsksAboutTheListedProcessByItsLocalName) {
  TempProc proc;
  auto kernel = std::make_shared<FakeKernel>();
  auto signaller = live(proc.root(), kernel);
  ASSERT_TRUE(signaller != nullptr);
  PendingSignal s = listed(proc.root(), 1001);
  EXPECT_EQ(signaller->vet(s), "");
  EXPECT_EQ(s.command, "python3");  // the question names /proc's comm, not the listed line
  EXPECT_EQ(kernel->calls, std::vector<std::string>{"may_signal 1001"});
  EXPECT_EQ(signaller->send(s), "sent SIGTERM to PID 1001 (python3)");
  EXPECT_EQ(kernel->calls, (std::vector<std::string>{"may_signal 1001", "pidfd_open 1001",
                                                     "pidfd_send 7 15", "close 7"}));
}

TEST(TopSignals, APidReusedBeforeTheQuestionIsRefused) {
  TempProc proc;
  auto kernel = std::make_shared<FakeKernel>();
  auto signaller = live(proc.root(), kernel);
  PendingSignal s = listed(proc.root(), 1003);  // pt_main_thread, starttime 150000
  proc.overlay("t1");                           // 1003 is now torchrun, starttime 170000
  EXPECT_EQ(signaller->vet(s),
            "PID 1003 is no longer the process listed (it exited or the PID was reused); "
            "nothing sent");
  EXPECT_TRUE(kernel->calls.empty());
}

TEST(TopSignals, APidReusedAfterTheQuestionIsRefusedAtSending) {
  TempProc proc;
  auto kernel = std::make_shared<FakeKernel>();
  auto signaller = live(proc.root(), kernel);
  PendingSignal s = listed(proc.root(), 1003);
  ASSERT_EQ(signaller->vet(s), "");
  proc.overlay("t1");
  EXPECT_NE(signaller->send(s).find("is no longer the process listed"), std::string::npos);
  EXPECT_FALSE(kernel->sent());
  EXPECT_EQ(kernel->calls, std::vector<std::string>{"may_signal 1003"});
}

TEST(TopSignals, APidReusedWhileThePidfdOpensIsCaughtByTheSecondCheck) {
  TempProc proc;
  auto kernel = std::make_shared<FakeKernel>();
  auto signaller = live(proc.root(), kernel);
  PendingSignal s = listed(proc.root(), 1003);
  ASSERT_EQ(signaller->vet(s), "");
  kernel->on_open = [&proc] { proc.overlay("t1"); };  // the pidfd now pins torchrun
  EXPECT_NE(signaller->send(s).find("is no longer the process listed"), std::string::npos);
  EXPECT_FALSE(kernel->sent());
  EXPECT_EQ(kernel->calls.back(), "close 7");
}

TEST(TopSignals, ASameStartTimeUnderAnotherNameIsRefusedByName) {
  TempProc proc;
  auto kernel = std::make_shared<FakeKernel>();
  auto signaller = live(proc.root(), kernel);
  PendingSignal s = listed(proc.root(), 1001);
  std::ifstream in(fs::path(proc.root()) / "1001" / "stat");
  std::string stat((std::istreambuf_iterator<char>(in)), {});
  stat.replace(stat.find("(python3)"), 9, "(bash)");
  proc.write("1001/stat", stat);
  EXPECT_EQ(signaller->vet(s), "PID 1001 is now 'bash', not 'python3' as listed; nothing sent");
  EXPECT_TRUE(kernel->calls.empty());
}

TEST(TopSignals, AnExitedPidIsRefusedInWords) {
  TempProc proc;
  auto kernel = std::make_shared<FakeKernel>();
  auto signaller = live(proc.root(), kernel);
  PendingSignal s = listed(proc.root(), 1004);
  ASSERT_EQ(signaller->vet(s), "");
  proc.remove("1004");
  EXPECT_EQ(signaller->send(s),
            "PID 1004 is no longer the process listed (it exited or the PID was reused); "
            "nothing sent");
  EXPECT_FALSE(kernel->sent());
  // Exiting between the check and the pidfd: the kernel's ESRCH, in the same words.
  PendingSignal t = listed(proc.root(), 1005);
  ASSERT_EQ(signaller->vet(t), "");
  kernel->open_result = -ESRCH;
  EXPECT_NE(signaller->send(t).find("no longer the process listed"), std::string::npos);
  EXPECT_FALSE(kernel->sent());
}

TEST(TopSignals, AProcessNotFoundWhenListedOrNotOursIsNotAsked) {
  TempProc proc;
  auto kernel = std::make_shared<FakeKernel>();
  auto signaller = live(proc.root(), kernel);
  PendingSignal unnamed{1002, 0, SIGTERM, "x", "", std::nullopt};  // other PID namespace
  EXPECT_EQ(signaller->vet(unnamed),
            "PID 1002 was not found in this machine's /proc when listed; nothing sent");
  PendingSignal pid1{1, 0, SIGTERM, "init", "init", 1};
  EXPECT_EQ(signaller->vet(pid1), "will not signal PID 1");
  EXPECT_TRUE(kernel->calls.empty());
  kernel->may_signal_errno = EPERM;
  PendingSignal s = listed(proc.root(), 1005);
  EXPECT_EQ(signaller->vet(s), "cannot signal PID 1005 (jupyter-lab): Operation not permitted");
  EXPECT_FALSE(kernel->sent());
}

TEST(TopSignals, WithoutPidfdsTheCheckedPidGetsKill) {
  TempProc proc;
  auto kernel = std::make_shared<FakeKernel>();
  kernel->open_result = -ENOSYS;
  auto signaller = live(proc.root(), kernel);
  PendingSignal s = listed(proc.root(), 1001, SIGINT);
  ASSERT_EQ(signaller->vet(s), "");
  EXPECT_EQ(signaller->send(s), "sent SIGINT to PID 1001 (python3)");
  EXPECT_EQ(kernel->calls.back(), "kill 1001 2");
}

pid_t spawn(std::vector<const char*> argv) {
  argv.push_back(nullptr);
  pid_t pid = -1;
  // posix_spawn returns once the child has exec'd, so /proc shows its new name.
  EXPECT_EQ(
      posix_spawnp(&pid, argv[0], nullptr, nullptr, const_cast<char* const*>(argv.data()), environ),
      0);
  return pid;
}

TEST(TopSignals, ARealChildWithItsListedStartTimeIsSignalled) {
  const pid_t child = spawn({"sleep", "30"});
  ASSERT_GT(child, 1);
  auto signaller = live("/proc", system_signal_kernel());
  PendingSignal s = listed("/proc", static_cast<std::uint32_t>(child));
  EXPECT_EQ(s.listed_name, "sleep");
  EXPECT_EQ(signaller->vet(s), "");
  EXPECT_EQ(signaller->send(s), "sent SIGTERM to PID " + std::to_string(child) + " (sleep)");
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
}

TEST(TopSignals, ARealChildThatExitedIsRefused) {
  const pid_t child = spawn({"sleep", "0"});
  ASSERT_GT(child, 1);
  PendingSignal s = listed("/proc", static_cast<std::uint32_t>(child));
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);  // reaped: the PID is free
  auto kernel = std::make_shared<FakeKernel>();
  auto signaller = live("/proc", kernel);
  EXPECT_NE(signaller->vet(s).find("no longer the process listed"), std::string::npos);
  EXPECT_TRUE(kernel->calls.empty());
}

TEST(TopSignals, TheModelStampsEachProcessWhenItIsListed) {
  TraceHeader header;
  tui::ModelBuilder builder(header, 10);
  std::uint64_t now = 100;
  builder.set_start_time_reader([&now](std::uint32_t pid) -> std::optional<std::uint64_t> {
    if (pid == 9) return std::nullopt;  // exited before it could be read
    return now + pid;
  });
  Tick t1{1.0, {}, {}};
  Sample s;
  s.gpu = 0;
  s.values.set(Metric::GpuUtil, 1.0);
  ProcessSample a, b;
  a.pid = 5;
  a.name = "a";
  b.pid = 9;
  b.name = "b";
  s.procs = std::vector<ProcessSample>{a, b};
  t1.samples.push_back(s);
  builder.on_tick(t1, nullptr);
  now = 500;  // a later tick without a process list keeps what was read at listing
  Tick t2{2.0, {}, {}};
  s.procs.reset();
  t2.samples.push_back(s);
  builder.on_tick(t2, nullptr);
  const auto& procs = builder.model().procs;
  ASSERT_EQ(procs.size(), 2u);
  EXPECT_EQ(procs[0].start_ticks, std::optional<std::uint64_t>(105));
  EXPECT_EQ(procs[0].name, "a");
  EXPECT_EQ(procs[1].start_ticks, std::nullopt);
}

}  // namespace
}  // namespace gpulens::cli
