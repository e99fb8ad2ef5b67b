// SPDX-License-Identifier: Apache-2.0
// `gpulens run -- CMD ARGS...`: runs a job untouched (stdin, stdout and its exit
// status pass straight through; stderr is relayed unchanged and read for an
// out-of-memory message), records the GPUs while it runs, and when it ends
// prints the verdict on stderr and writes the report.
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "cli/command.hpp"
#include "cli/kernel_evidence.hpp"
#include "cli/kernels_setup.hpp"
#include "cli/launches_setup.hpp"
#include "cli/report_setup.hpp"
#include "cli/terminal_output.hpp"
#include "core/clock.hpp"
#include "core/signal_thread.hpp"
#include "jobs/child_process.hpp"
#include "jobs/job_recorder.hpp"
#include "jobs/oom_message.hpp"
#include "jobs/step_matcher.hpp"
#include "kernels/view/analysis.hpp"
#include "render/kernels_output.hpp"
#include "render/launches_output.hpp"
#include "render/verdict_output.hpp"

namespace gpulens::cli {
namespace {

struct RunArgs {
  sampler::SourceOptions source;
  ReportSettings settings;
  std::string output;
  std::string trace;
  std::string step_regex;
  bool live = false;
  double live_every_s = 5;
  bool quiet = false;
  bool kernels = false;
  bool kernels_syncs = false;
  bool no_launches = false;
  bool no_stderr_scan = false;
  double kernels_window_s = 2;
  double kernels_every_s = 20;
  double kill_after_s = 10;
  std::vector<std::string> command;
};

// True when the job's group is its terminal's foreground group: a terminal
// signal then reached the job itself and must not be sent twice.
bool job_has_terminal(pid_t job) {
  return ::isatty(STDIN_FILENO) != 0 && ::tcgetpgrp(STDIN_FILENO) == job;
}

// Signals while the job runs. gpulens must outlive its job to give the verdict.
// The job runs in its own process group (the terminal's foreground one when
// gpulens had the terminal): a signal from the terminal (Ctrl-C, Ctrl-\,
// hang-up) goes to that group directly, so gpulens just keeps waiting; a signal
// sent to gpulens (kill, a batch scheduler) is passed on to the job's whole group.
// Once the job is over, a signal stops gpulens at once (it was writing the report).
// A job that ignores the signal passed on (`trap "" TERM`) would keep gpulens
// waiting for ever, and a batch scheduler's stop with it: `kill_after_s` after
// the first signal passed on, the job's whole group gets SIGKILL.
class SignalRelay {
 public:
  static SignalRelay& instance() {
    static SignalRelay relay;  // outlives the detached threads
    return relay;
  }
  // Call before any other thread starts, so that every thread inherits the mask.
  void start(double kill_after_s, bool quiet) {
    kill_after_s_ = kill_after_s;
    quiet_ = quiet;
    block_signals({SIGINT, SIGTERM, SIGHUP, SIGQUIT});
    start_signal_thread({SIGINT, SIGTERM, SIGHUP, SIGQUIT}, "gpulens-relay",
                        [this](const siginfo_t& info) { on_signal(info); });
  }
  // The job is about to start: from now on a signal is the job's business.
  void starting() { starting_.store(true); }
  void set_child(pid_t pid) {
    std::lock_guard lock(mutex_);
    child_ = pid;
    // A signal that came while the job was being started may have missed it.
    if (pending_ != 0) pass_on_locked(pending_);
  }
  // The job was reaped: no signal may reach its (now reusable) process group.
  void job_done() {
    done_.store(true);
    {
      std::lock_guard lock(mutex_);
      ended_ = true;
    }
    ended_cv_.notify_all();
  }

 private:
  void on_signal(const siginfo_t& info) {
    const int sig = info.si_signo;
    // Before the job starts there is nothing to wait for; after it ended, the
    // user is stopping the report.
    if (done_.load() || !starting_.load()) _exit(128 + sig);
    std::lock_guard lock(mutex_);
    if (child_ <= 0) {
      pending_ = sig;
    } else if (info.si_code != SI_KERNEL || !job_has_terminal(child_)) {
      pass_on_locked(sig);
    }
  }
  void pass_on_locked(int sig) {
    if (ended_) return;
    ::kill(-child_, sig);  // the job's process group: every process of it
    if (escalating_) return;
    escalating_ = true;
    std::thread([this, sig] { kill_if_still_running(sig); }).detach();
  }
  void kill_if_still_running(int sig) {
    std::unique_lock lock(mutex_);
    const auto grace = std::chrono::duration<double>(kill_after_s_);
    if (ended_cv_.wait_for(lock, grace, [this] { return ended_; })) return;
    ::kill(-child_, SIGKILL);
    if (!quiet_) {
      eprint(
          "gpulens: the job did not end within {:g} s of {} (--kill-after): its "
          "processes were killed (SIGKILL)\n",
          kill_after_s_, sigabbrev(sig));
    }
  }
  static const char* sigabbrev(int sig) {
    switch (sig) {
      case SIGINT:
        return "SIGINT";
      case SIGTERM:
        return "SIGTERM";
      case SIGHUP:
        return "SIGHUP";
      case SIGQUIT:
        return "SIGQUIT";
      default:
        return "the signal";
    }
  }
  std::mutex mutex_;
  std::condition_variable ended_cv_;
  pid_t child_ = 0;
  int pending_ = 0;
  bool ended_ = false;       // guarded by mutex_
  bool escalating_ = false;  // guarded by mutex_
  double kill_after_s_ = 10;
  bool quiet_ = false;
  std::atomic<bool> starting_{false};
  std::atomic<bool> done_{false};
};

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return {};
  return buf;
}

// A private directory for the marks file (and the trace, unless --trace names one).
std::optional<std::filesystem::path> make_run_dir() {
  std::error_code ec;
  auto base = std::filesystem::temp_directory_path(ec);
  if (ec) base = "/tmp";
  std::string templ = (base / "gpulens-run-XXXXXX").string();
  if (mkdtemp(templ.data()) == nullptr) return std::nullopt;
  return std::filesystem::path(templ);
}

void say(const RunArgs& a, const std::string& line) {
  if (!a.quiet) eprint("gpulens: {}\n", line);
}

std::optional<double> live_peak(const sources::TickSource* source, const ReportTables& tables,
                                const ReportSettings& s) {
  if (source == nullptr) return std::nullopt;
  const auto peak = verdict::resolve_peak(
      source->header().devices, tables.models ? &*tables.models : nullptr, s.dtype, s.peak_tflops);
  if (!peak.known()) return std::nullopt;
  return peak.total_tflops;
}

// After the job: the verdict on stderr, the report file. Failures here are
// reported but never change the exit status, which is the job's.
void report(const RunArgs& a, const verdict::VerdictOptions& options,
            const std::string& trace_path) {
  // Lenient: a line the job's marks made odd must not cost the whole verdict.
  auto recording = read_recording(trace_path, TraceReadOptions{.lenient = true});
  if (!recording) {
    eprint("gpulens: cannot read the recording back: {}\n", recording.error().message);
    return;
  }
  const Trace* trace = &recording->trace;
  for (const auto& w : trace->warnings) say(a, "warning: " + w);
  // The kernel view (run --kernels) first: its collectives, kernels and synchronisations
  // inform the verdict's fixes.
  const auto& view = recording->kernels;
  const auto& launches = recording->launches;
  verdict::VerdictOptions with_kernels = options;
  if (view) apply_kernel_view(with_kernels, *view);
  if (launches) with_kernels.launches = launch_evidence(*launches);
  const verdict::Verdict verdict = verdict::build_verdict(*trace, with_kernels);
  if (!a.quiet) {
    std::string text = "\n" + render::verdict_to_text(verdict);
    if (view) text += "\n" + render::kernels_to_text(*view);
    if (launches) text += "\n" + render::launches_to_text(*launches);
    print_to_stderr(text);
  }
  if (!a.output.empty()) {
    const auto text =
        render_report(verdict, *trace, view, launches, report_format_for_path(a.output));
    if (auto ok = write_report(text, a.output); !ok) {
      eprint("gpulens: {}\n", ok.error().message);
    } else {
      say(a, "report: " + a.output);
    }
  }
  say(a, "trace: " + trace_path + "  (gpulens report " + trace_path + " -o report.html)");
}

// --step-regex: the job's stdout line of each step becomes a step mark; null without it.
Result<std::shared_ptr<jobs::StepMatcher>> step_matcher_for(const RunArgs& a) {
  if (a.step_regex.empty()) return std::shared_ptr<jobs::StepMatcher>();
  auto m = jobs::StepMatcher::create(a.step_regex, a.settings.flops_per_step.value_or(0));
  if (!m) return m.error();
  return std::make_shared<jobs::StepMatcher>(std::move(*m));
}

// The run's files, in its private directory: the marks file, and the trace unless
// --trace names one.
struct RunFiles {
  std::filesystem::path dir;
  std::string marks;
  std::string trace;
};

RunFiles run_files(const RunArgs& a, const std::filesystem::path& dir) {
  RunFiles files{dir, (dir / "marks.jsonl").string(), {}};
  std::ofstream(files.marks).close();  // exists from the start, for `>>` and tail
  files.trace = a.trace.empty() ? (dir / "trace.jsonl").string() : a.trace;
  return files;
}

// The GPUs to record; none (and why) when they cannot be opened: the job runs anyway.
std::unique_ptr<sources::TickSource> open_gpus(const RunArgs& a, const sampler::SourceOptions& so,
                                               std::string& not_measured) {
  auto opened = sampler::open_tick_source(so);
  if (opened) return std::move(*opened);
  not_measured = opened.error().message;
  say(a, "no GPU will be measured (" + not_measured + "); the job runs anyway");
  return nullptr;
}

jobs::RecorderOptions recorder_options(const RunArgs& a, const sampler::SourceOptions& so,
                                       const RunFiles& files, const sources::TickSource* source,
                                       const ReportTables& tables) {
  jobs::RecorderOptions ro;
  ro.trace_path = files.trace;
  ro.marks_path = files.marks;
  ro.procfs = so.procfs;
  ro.host = host_name();
  ro.inbox = std::make_shared<jobs::MarkInbox>();
  ro.drain_replay = !so.replay.empty() && so.speed == 0;
  ro.peak_total_tflops = live_peak(source, tables, a.settings);
  if (a.live) {
    ro.on_live_status = [](const std::string& line) { eprint("{}\n", line); };
    ro.live_every_s = a.live_every_s;
  }
  return ro;
}

// --kernels: the injection library and where its records go, in windows unless
// --kernels-every 0; said when it cannot be had.
KernelsSetup job_kernels(const RunArgs& a, const RunFiles& files) {
  if (!a.kernels) return {};
  KernelsSetup kernels = prepare_kernels(
      files.dir.string(), a.kernels_every_s > 0 ? std::optional<KernelsWindows>(KernelsWindows{
                                                      a.kernels_window_s, a.kernels_every_s})
                                                : std::nullopt);
  if (!kernels.unavailable.empty()) say(a, "no kernel view: " + kernels.unavailable);
  return kernels;
}

// Launch counts unless --no-launches; said when they cannot be had.
LaunchesSetup job_launches(const RunArgs& a, const RunFiles& files) {
  if (a.no_launches) return {};
  LaunchesSetup launches = prepare_launches(files.dir.string());
  if (!launches.unavailable.empty()) say(a, "no launch counts: " + launches.unavailable);
  return launches;
}

// The job's command and environment; with --step-regex its stdout is read for
// steps; unless --no-stderr-scan its stderr is read for an out-of-memory message.
jobs::ChildOptions child_options(const RunArgs& a, const RunFiles& files,
                                 const KernelsSetup& kernels, const LaunchesSetup& launches,
                                 std::shared_ptr<jobs::StepMatcher> matcher,
                                 std::shared_ptr<jobs::MarkInbox> inbox,
                                 std::shared_ptr<jobs::OomScanner> scanner) {
  jobs::ChildOptions co;
  co.argv = a.command;
  co.env = {{"GPULENS_MARKS", files.marks}};
  co.env.insert(co.env.end(), kernels.env.begin(), kernels.env.end());
  // The counting library goes first in LD_PRELOAD, before the CUPTI one and the user's.
  for (const auto& [key, value] : launches.env) {
    if (key == "LD_PRELOAD") {
      prepend_preload(co.env, value.substr(0, value.find(':')));
    } else {
      co.env.emplace_back(key, value);
    }
  }
  if (a.kernels_syncs && !kernels.env.empty()) co.env.emplace_back("GPULENS_KERNELS_SYNCS", "1");
  if (matcher) {
    co.on_stdout_line = [matcher, inbox](std::string_view line) {
      if (auto m = matcher->match(line, unix_now())) inbox->push(std::move(*m));
    };
  }
  if (scanner) co.on_stderr = [scanner](std::string_view bytes) { scanner->feed(bytes); };
  return co;
}

void say_recording(const RunArgs& a, std::size_t gpus, bool live,
                   const sampler::SourceOptions& so) {
  if (gpus == 0) return;
  say(a, fmt::format("recording {} GPU{} {}; the verdict comes when the job ends", gpus,
                     gpus == 1 ? "" : "s",
                     live ? fmt::format("every {:g} s", so.interval_s) : "from " + so.replay));
}

// After the job: the recording closed, the kernel records merged into it, the verdict.
void conclude(const RunArgs& a, const verdict::VerdictOptions& options, jobs::JobRecorder& recorder,
              const jobs::ChildExit& exit, const std::string& not_measured,
              const KernelsSetup& kernels, const LaunchesSetup& launches, const RunFiles& files,
              const jobs::OomScanner* scanner) {
  StderrScan scan = scanner ? scanner->found() : StderrScan{};
  scan.state = scanner ? exit.stderr_state : "off";
  auto job = recorder.finish(exit, a.source.gpus, not_measured, scan);
  if (!job) eprint("gpulens: recording: {}\n", job.error().message);
  if (a.kernels) {
    if (auto problem = merge_kernel_records(kernels, files.trace); !problem.empty()) {
      say(a, "warning: " + problem);
    }
  }
  if (auto problem = merge_launch_records(launches, files.trace); !problem.empty()) {
    say(a, "warning: " + problem);
  }
  // The job's exit status is gpulens' whatever the report does: a reader that
  // throws on something the job wrote costs the report, never the status.
  try {
    report(a, options, files.trace);
  } catch (const std::exception& e) {
    eprint("gpulens: no report: {}\n", e.what());
  }
}

int run_job(RunArgs& a) {
  SignalRelay::instance().start(a.kill_after_s, a.quiet);
  ::signal(SIGPIPE, SIG_IGN);  // a closed stdout is handled where it is written

  const ReportTables tables = load_report_tables(a.settings.data_dir);
  for (const auto& w : tables.warnings) say(a, "warning: " + w);
  a.settings.gpus = a.source.gpus;
  auto options = make_verdict_options(a.settings, tables);
  if (!options) {
    eprint("gpulens run: {}\n", options.error().message);
    return kExitUsage;
  }
  auto matcher = step_matcher_for(a);
  if (!matcher) {
    eprint("gpulens run: {}\n", matcher.error().message);
    return kExitUsage;
  }
  const auto dir = make_run_dir();
  if (!dir) {
    eprint("gpulens run: cannot create a temporary directory\n");
    return kExitFailure;
  }
  const RunFiles files = run_files(a, *dir);

  sampler::SourceOptions so = a.source;
  so.marks_path.clear();  // the recorder follows the marks file itself
  std::string not_measured;
  auto source = open_gpus(a, so, not_measured);
  const jobs::RecorderOptions ro = recorder_options(a, so, files, source.get(), tables);
  const std::size_t gpus = source ? source->header().devices.size() : 0;
  const bool live_source = source && source->live();
  auto recorder = jobs::JobRecorder::open(std::move(source), ro);
  if (!recorder) {
    eprint("gpulens run: {}\n", recorder.error().message);
    std::error_code ec;
    std::filesystem::remove_all(files.dir, ec);
    return kExitFailure;
  }

  const KernelsSetup kernels = job_kernels(a, files);
  const LaunchesSetup launches = job_launches(a, files);
  int exec_errno = 0;
  const double started = unix_now();
  SignalRelay::instance().starting();
  auto scanner = a.no_stderr_scan ? nullptr : std::make_shared<jobs::OomScanner>();
  auto child = jobs::ChildProcess::spawn(
      child_options(a, files, kernels, launches, *matcher, ro.inbox, scanner), &exec_errno);
  if (!child) {
    eprint("gpulens run: {}\n", child.error().message);
    recorder->reset();  // stops sampling before the directory goes
    std::error_code ec;
    std::filesystem::remove_all(files.dir, ec);
    return exec_errno != 0 ? jobs::exit_code_for_exec_errno(exec_errno) : kExitFailure;
  }
  SignalRelay::instance().set_child(child->pid());
  (*recorder)->begin({join_command(a.command), child->pid(), started});
  say_recording(a, gpus, live_source, so);

  const jobs::ChildExit exit = child->wait();
  SignalRelay::instance().job_done();
  conclude(a, *options, **recorder, exit, not_measured, kernels, launches, files, scanner.get());

  std::error_code ec;
  std::filesystem::remove(files.marks, ec);
  if (!a.trace.empty()) std::filesystem::remove(files.dir, ec);
  return exit.status();
}

constexpr const char* kRunDescription =
    "Run a job and say how well it used the GPUs: gpulens run [OPTIONS] -- CMD ARGS...\n"
    "The job keeps its stdin, stdout and stderr; its exit status becomes gpulens'. Its stderr\n"
    "is relayed (through a pseudo-terminal when it is a terminal) and read for an out-of-\n"
    "memory message (CUDA, PyTorch, JAX, TensorFlow, CuPy; --no-stderr-scan: not). When it "
    "ends,\n"
    "the verdict (utilization funnel, states, alerts, fixes, cost, MFU) goes to stderr.\n"
    "The job may append JSON lines like {\"mark\": \"step\", \"flops\": 6.1e12} to the file\n"
    "named by $GPULENS_MARKS for true model-FLOPs MFU, and NAME:start/NAME:end marks for\n"
    "phases. From Python, the gpulens package (a no-op when not run under gpulens):\n"
    "  import gpulens\n"
    "  with gpulens.phase(\"eval\"): ...\n"
    "  gpulens.step(flops=6 * n_params * tokens)   # after each step's GPU work is done\n"
    "From a shell: python -m gpulens mark step --flops 6.1e12";

// The report and the recording, how steps are counted, live status lines.
void add_report_options(CLI::App& cmd, RunArgs& args) {
  cmd.add_option("-o,--output", args.output,
                 "Write the report here: .html (one self-contained page), .json or text");
  cmd.add_option("--trace", args.trace,
                 "Keep the recording here (default: a file in a temporary directory)");
  add_report_settings_options(cmd, args.settings);
  auto* flops = cmd.add_option("--flops-per-step", args.settings.flops_per_step,
                               "Model FLOPs of one training step (e.g. 6 x params x tokens)")
                    ->check(CLI::PositiveNumber);
  cmd.add_option("--step-regex", args.step_regex,
                 "A regular expression matching the job's stdout line for each step; a capture "
                 "group holding a number is the step counter")
      ->needs(flops);
  cmd.add_flag("--live", args.live, "Print a one-line status on stderr every few seconds");
  cmd.add_option("--live-every", args.live_every_s, "Seconds between --live lines")
      ->check(CLI::Range(0.5, 3600.0))
      ->capture_default_str();
}

void add_kernels_options(CLI::App& cmd, RunArgs& args) {
  cmd.add_flag(
      "--no-launches", args.no_launches,
      "Do not count the job's kernel launches. By default each process of the job loads "
      "libgpulens_launches.so (LD_PRELOAD), which counts every kernel and CUDA-graph "
      "launch at the driver's launch calls, with no profiler: the report's \"Kernel "
      "launches\" (launches/s per GPU, the most launched kernels). Counts, not time. On an "
      "H200 it cost an empty kernel's launch +0.36 % +- 0.24 from one thread and "
      "+0.25 % +- 0.35 from four, a CUDA-graph replay or a training step nothing "
      "measurable (docs/kernels.md)");
  auto* kernels = cmd.add_flag(
      "--kernels", args.kernels,
      "Also record the job's GPU activity kernel by kernel (CUPTI, through "
      "libgpulens_kernels.so): top kernels with SM coverage, idle gaps, copies, "
      "synchronisations; in windows (--kernels-window, --kernels-every). Costs a GPU-bound job "
      "nothing measurable, a job of many small kernels about a fifth of its step time. A job "
      "that starts torch.profiler itself may fail at the profiler's end (1 in 30 on an H200); "
      "in a PyTorch job synchronisations are not recorded unless --kernels-syncs, as they made "
      "that one in two (docs/kernels.md)");
  cmd.add_option("--kernels-window", args.kernels_window_s, "Seconds of each traced window")
      ->check(CLI::Range(0.1, 3600.0))
      ->capture_default_str()
      ->needs(kernels);
  cmd.add_option("--kernels-every", args.kernels_every_s,
                 "One traced window every this many seconds once the job is under way (the "
                 "first at its first CUDA start, the next ones closer together); 0 traces the "
                 "whole job")
      ->check(CLI::Range(0.0, 86400.0))
      ->capture_default_str()
      ->needs(kernels);
  cmd.add_flag("--kernels-syncs", args.kernels_syncs,
               "Record CUDA synchronisations in a PyTorch job too (they tell a loop that "
               "synchronises from one that only launches). Only for a job that does not start "
               "torch.profiler itself: with them on, its profiler failed at its end in about half "
               "the jobs on an H200")
      ->needs(kernels);
}

// The job is everything after "--", or everything from the first word that is
// not an option of ours. CLI11 moves "--" to remaining(): the positional takes
// words only after it; before it, prefix_command() hands the first word and
// all that follows to remaining(), in order.
void add_job_command(CLI::App* cmd, RunArgs& args) {
  cmd->add_option("command", args.command, "The job: CMD ARGS... (after --)")
      ->check(CLI::Validator(
          [cmd](std::string&) {
            const auto r = cmd->remaining();
            return std::find(r.begin(), r.end(), "--") != r.end() ? std::string()
                                                                  : std::string("before --");
          },
          "", "after --"));
  cmd->validate_positionals();
  cmd->prefix_command();
}

// Once parsed: the job's words (from remaining() when given before "--"), and
// the checks that span options.
void complete_run_args(CLI::App* cmd, RunArgs& args) {
  if (args.command.empty()) {
    for (auto& word : cmd->remaining()) {
      if (args.command.empty() && word == "--") continue;
      args.command.push_back(std::move(word));
    }
  }
  if (args.command.empty()) {
    throw CLI::ValidationError("run", "no job to run: gpulens run [OPTIONS] -- CMD ARGS...");
  }
  if (args.kernels_every_s > 0 && args.kernels_window_s >= args.kernels_every_s) {
    throw CLI::ValidationError(
        "--kernels-window",
        fmt::format("{} s is not shorter than --kernels-every ({} s); use --kernels-every 0 "
                    "to trace the whole job",
                    args.kernels_window_s, args.kernels_every_s));
  }
}

}  // namespace

void register_run(CLI::App& app, std::function<int()>& run) {
  auto args = std::make_shared<RunArgs>();
  auto* cmd = app.add_subcommand("run", kRunDescription);
  add_source_options(*cmd, args->source, /*offline=*/false);
  add_report_options(*cmd, *args);
  add_kernels_options(*cmd, *args);
  cmd->add_option("--kill-after", args->kill_after_s,
                  "Seconds a job may take to end after gpulens passes it a stop signal (SIGTERM, "
                  "SIGINT, SIGHUP, SIGQUIT sent to gpulens); then its whole process group gets "
                  "SIGKILL, and gpulens exits with 137 and still gives the verdict")
      ->check(CLI::Range(0.0, 86400.0))
      ->capture_default_str();
  cmd->add_flag("-q,--quiet", args->quiet, "Print nothing but the job's own output");
  cmd->add_flag("--no-stderr-scan", args->no_stderr_scan,
                "Leave the job's stderr as it is (inherited, not relayed) and do not read it for "
                "an out-of-memory message: how the job died then rests on the counters alone");
  add_job_command(cmd, *args);
  cmd->callback([args, &run, cmd] {
    complete_run_args(cmd, *args);
    run = [args] { return run_job(*args); };
  });
}

}  // namespace gpulens::cli
