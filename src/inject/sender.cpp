// SPDX-License-Identifier: Apache-2.0
#include "inject/sender.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>
#include <vector>

#include "inject/injection.hpp"
#include "kernels/record/chunk_record.hpp"

namespace gpulens::inject {
namespace {

kernels::ProcessRecord process_record(const Injection& in) {
  kernels::ProcessRecord p;
  char exe[512] = {};
  if (readlink("/proc/self/exe", exe, sizeof exe - 1) > 0) p.exe = exe;
  const CuptiLibrary& lib = in.cupti.library();
  p.cupti_path = lib.path;
  p.cupti_version = in.cupti.version();
  if (lib.handle == nullptr) p.cupti_searched = lib.searched;
  const RecordClock clock = in.records.clock();
  p.base_ns = clock.base_ns;
  p.base_unix_ns = clock.base_unix_ns;
  if (const auto& s = in.windows.schedule) {
    p.sampling = kernels::ProcessRecord::Sampling{s->first_s, s->window_s, s->every_s, s->ramp_s};
  }
  p.schedule_error = in.windows.schedule_error;
  if (const char* kinds = std::getenv("GPULENS_KERNELS_KINDS"); kinds != nullptr) {
    p.kinds = kinds;  // a measurement run recorded only these
  } else if (in.cupti.syncs_withheld()) {
    p.kinds = in.cupti.recorded_kinds();
    p.kinds_note =
        "CUDA synchronisations were not recorded: the job carries its own CUPTI client "
        "(such as PyTorch's profiler), which CUPTI's synchronisation records can break "
        "(--kernels-syncs records them)";
  }
  return p;
}

// Appends whole lines to this process's record file in one write. Called with
// `writing` held.
void append_lines(Sender& s, const std::vector<std::string>& lines) {
  if (lines.empty() || s.out_dir.empty()) return;  // summaries to the agent only
  std::string text;
  for (const auto& l : lines) text += l + '\n';
  if (s.record_fd < 0) {
    const std::string path = s.out_dir + "/kernels-" + std::to_string(getpid()) + ".jsonl";
    s.record_fd = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (s.record_fd < 0) return;  // `gpulens run` then says no process wrote a record
  }
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(s.record_fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

void ensure_process_line(Injection& in) {
  Sender& s = in.sender;
  if (s.process_written) return;
  s.process_written = true;
  append_lines(s, kernels::encode_process(getpid(), process_record(in)));
}

}  // namespace

void write_chunk(Injection& in, std::uint64_t start, std::uint64_t end, bool window) {
  Sender& s = in.sender;
  std::lock_guard writing(s.writing);
  if (s.written) return;
  std::optional<Drained> d = in.records.drain();
  if (!d) return;
  ensure_process_line(in);
  const RecordClock clock = in.records.clock();
  d->chunk.seq = s.chunks++;
  d->chunk.start_ns = static_cast<std::int64_t>(start - clock.base_ns);
  d->chunk.end_ns = static_cast<std::int64_t>(end - clock.base_ns);
  d->chunk.window = window;
  if (!s.out_dir.empty()) {
    if (!d->names.empty()) append_lines(s, kernels::encode_names(getpid(), d->chunk.seq, d->names));
    append_lines(s, kernels::encode_chunk(getpid(), d->chunk));
  }
  if (s.agent) s.agent->on_chunk(d->names, d->chunk, clock.base_unix_ns);
}

void write_end(Injection& in) {
  Sender& s = in.sender;
  std::lock_guard writing(s.writing);
  if (s.written || s.out_dir.empty()) return;
  ensure_process_line(in);
  const CuptiStatus status = in.cupti.status();
  kernels::EndRecord e;
  e.status = status.status;
  e.reason = status.reason;
  if (status.yielded_ns) e.yielded_ns = *status.yielded_ns;
  if (auto activity = in.records.activity()) e.activity = *activity;
  e.nvtx_status = status.nvtx_status;
  e.nvtx_reason = status.nvtx_reason;
  e.unmatched = in.records.unmatched_ranges();
  e.chunks = s.chunks;
  e.agent = s.agent != nullptr || !s.agent_note.empty();
  if (s.agent) e.agent_sent = s.agent->sent(), e.agent_dropped = s.agent->dropped();
  e.agent_note = s.agent_note;
  append_lines(s, kernels::encode_end(getpid(), e));
  s.written = true;
  if (s.record_fd >= 0) close(s.record_fd);
  s.record_fd = -1;
}

}  // namespace gpulens::inject
