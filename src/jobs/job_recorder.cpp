// SPDX-License-Identifier: Apache-2.0
#include "jobs/job_recorder.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <mutex>
#include <set>
#include <thread>

#include "core/clock.hpp"
#include "core/input_limits.hpp"
#include "core/marks_tail.hpp"
#include "core/trace_writer.hpp"
#include "jobs/live_status.hpp"
#include "jobs/process_tree.hpp"

namespace gpulens::jobs {

struct JobRecorder::Impl {
  std::unique_ptr<sources::TickSource> source;
  RecorderOptions options;
  JobStart job;
  bool replay = false;
  std::optional<TraceWriter> writer;
  std::optional<MarksTail> marks;
  std::optional<LiveStatus> live;
  std::thread thread;

  std::mutex mutex;        // guards everything below
  std::vector<Mark> held;  // read, but newer than the last tick written
  std::optional<double> first_t, last_t;
  double last_live = 0;
  bool job_start_written = false;
  std::set<int> job_gpus;
  std::set<std::uint32_t> tree;  // the job's processes, as of tree_t
  std::optional<double> tree_t;
  std::set<int> seen_gpus;
  std::string write_error;

  // The job's clock: wall time live, the replay's newest tick in a replay.
  double now_locked() const {
    if (replay) return last_t.value_or(job.wall_t);
    return unix_now();
  }

  void write_mark(const Mark& m) {
    if (!writer || !write_error.empty()) return;
    if (auto ok = writer->write(m); !ok) write_error = ok.error().message;
  }

  void write_job_start(double t) {
    if (job_start_written) return;
    job_start_written = true;
    write_mark(job_start_mark(t, job.command, static_cast<int>(job.pid)));
  }

  // Marks up to `t` go out before the tick's samples; later ones wait for the next tick.
  void merge_marks(double t, bool final) {
    std::vector<Mark> fresh;
    if (options.inbox) fresh = options.inbox->take();
    if (replay) {
      for (auto& m : fresh) m.t = t;
    }
    if (marks) {
      // NaN flags a mark without a "t" of its own: it happened "now".
      for (auto& m : marks->poll(std::numeric_limits<double>::quiet_NaN())) {
        if (std::isnan(m.t)) m.t = replay ? t : unix_now();
        fresh.push_back(std::move(m));
      }
    }
    for (auto& m : fresh) {
      if (live) live->on_mark(m);
      held.push_back(std::move(m));
    }
    std::stable_sort(held.begin(), held.end(),
                     [](const Mark& a, const Mark& b) { return a.t < b.t; });
    std::size_t n = 0;
    while (n < held.size() && (final || held[n].t <= t)) write_mark(held[n++]);
    held.erase(held.begin(), held.begin() + static_cast<std::ptrdiff_t>(n));
  }

  // Which GPUs the job's processes hold. Walking /proc costs a few ms, so the
  // job's process tree is refreshed at most once a second.
  void note_job_gpus(const Tick& tick) {
    const bool any = std::any_of(tick.samples.begin(), tick.samples.end(),
                                 [](const Sample& s) { return s.procs && !s.procs->empty(); });
    if (!any) return;
    if (!tree_t || tick.t - *tree_t >= 1.0) {
      tree = process_tree(options.procfs, static_cast<std::uint32_t>(job.pid));
      tree_t = tick.t;
    }
    for (int g : gpus_used_by(tick.samples, tree)) job_gpus.insert(g);
  }

  void on_tick(const Tick& tick) {
    std::lock_guard lock(mutex);
    if (!first_t) {
      first_t = tick.t;
      // A replay's job covers the replay from its first interval.
      write_job_start(replay ? tick.t - source->header().interval_s.value_or(0) : job.wall_t);
    }
    last_t = tick.t;
    // The source's own marks (a replay's phases, the sampler's XID and lost-GPU
    // events) are part of the recording too.
    for (const auto& m : tick.marks) held.push_back(m);
    merge_marks(tick.t, false);
    for (const auto& s : tick.samples) {
      seen_gpus.insert(s.gpu);
      if (writer && write_error.empty()) {
        if (auto ok = writer->write(s); !ok) write_error = ok.error().message;
      }
    }
    if (!replay && job.pid > 0) note_job_gpus(tick);
    if (live) {
      live->on_tick(tick);
      if (tick.t - last_live >= options.live_every_s && options.on_live_status) {
        last_live = tick.t;
        options.on_live_status(live->take_line(tick.t, {job_gpus.begin(), job_gpus.end()}));
      }
    }
    if (writer) (void)writer->flush();
  }

  void loop() {
    while (true) {
      auto tick = source->next();
      if (!tick) {
        std::lock_guard lock(mutex);
        write_error = tick.error().message;
        return;
      }
      if (!tick->has_value()) return;
      on_tick(**tick);
    }
  }
};

JobRecorder::JobRecorder(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

JobRecorder::~JobRecorder() {
  if (impl_ && impl_->thread.joinable()) {
    if (impl_->source) impl_->source->stop();
    impl_->thread.join();
  }
}

Result<std::unique_ptr<JobRecorder>> JobRecorder::open(std::unique_ptr<sources::TickSource> source,
                                                       RecorderOptions options) {
  auto impl = std::make_unique<Impl>();
  impl->source = std::move(source);
  impl->options = std::move(options);
  impl->replay = impl->source && !impl->source->live();
  TraceHeader header;
  if (impl->source) {
    header = impl->source->header();
  } else {
    header.host = impl->options.host;
  }
  auto writer = TraceWriter::open(impl->options.trace_path, header);
  if (!writer) return writer.error();
  impl->writer.emplace(std::move(*writer));
  if (!impl->options.marks_path.empty()) impl->marks.emplace(impl->options.marks_path);
  if (impl->options.on_live_status && impl->source) {
    impl->live.emplace(header, impl->options.peak_total_tflops);
  }
  return std::unique_ptr<JobRecorder>(new JobRecorder(std::move(impl)));
}

void JobRecorder::begin(JobStart job) {
  Impl* raw = impl_.get();
  if (raw->thread.joinable()) return;
  raw->job = std::move(job);
  if (raw->source) raw->thread = std::thread([raw] { raw->loop(); });
}

Result<JobRecord> JobRecorder::finish(const ChildExit& exit, const std::vector<int>& gpus,
                                      const std::string& not_measured,
                                      const StderrScan& stderr_scan) {
  Impl& s = *impl_;
  if (s.source && !(s.replay && s.options.drain_replay)) s.source->stop();
  if (s.thread.joinable()) s.thread.join();
  std::lock_guard lock(s.mutex);
  const double end = s.now_locked();
  s.write_job_start(s.replay ? end : s.job.wall_t);
  s.merge_marks(end, /*final=*/true);
  JobRecord job;
  job.present = true;
  job.command = s.job.command;
  job.pid = static_cast<int>(s.job.pid);
  job.exit_code = exit.code;
  job.signal = exit.signal;
  job.not_measured = not_measured;
  job.stderr_scan = stderr_scan;
  if (!gpus.empty()) {
    job.gpus = gpus;
    job.gpus_basis = "--gpus";
  } else if (!s.job_gpus.empty()) {
    job.gpus.assign(s.job_gpus.begin(), s.job_gpus.end());
    job.gpus_basis = "processes";
  } else if (s.source) {
    // No process of the job was seen on a GPU (no process lists, a replay, or a
    // container that hides host PIDs): the job is charged for every GPU watched.
    for (const auto& d : s.source->header().devices) s.seen_gpus.insert(d.index);
    job.gpus.assign(s.seen_gpus.begin(), s.seen_gpus.end());
    job.gpus_basis = "all";
  }
  if (s.marks) {
    job.marks_skipped = s.marks->bad_lines();
    if (!s.marks->refused().empty()) {
      job.marks_problem = "no longer read once the job replaced it: " + s.marks->refused();
    } else if (s.marks->truncated()) {
      job.marks_problem =
          fmt::format("not read past {} MiB; later marks were ignored", kMaxMarksFileBytes >> 20);
    }
  }
  job.start = s.first_t ? std::optional<double>(s.replay ? *s.first_t : s.job.wall_t)
                        : std::optional<double>(s.job.wall_t);
  job.end = end;
  s.write_mark(job_end_mark(end, job));
  if (s.writer) s.writer->close();
  if (!s.write_error.empty()) return Error{s.write_error};
  return job;
}

}  // namespace gpulens::jobs
