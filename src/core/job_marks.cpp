// SPDX-License-Identifier: Apache-2.0
#include "core/job_marks.hpp"

#include <algorithm>
#include <cmath>

#include "core/text_safety.hpp"

namespace gpulens {
namespace {

template <typename T>
std::optional<T> field(const nlohmann::json& fields, const char* key) {
  const auto it = fields.find(key);
  if (it == fields.end() || it->is_null()) return std::nullopt;
  if constexpr (std::is_same_v<T, std::string>) {
    if (!it->is_string()) return std::nullopt;
  } else {
    if (!it->is_number()) return std::nullopt;
  }
  return it->get<T>();
}

// A figure in MiB from a recording: finite and not negative, else none.
std::optional<double> mib_field(const nlohmann::json& fields, const char* key) {
  const auto v = field<double>(fields, key);
  if (!v || !std::isfinite(*v) || *v < 0) return std::nullopt;
  return v;
}

// The out-of-memory line as shown: one terminal-safe line, cut at a character
// boundary. A recording comes from anywhere, so it is cleaned on the way in too.
std::string bounded_line(std::string_view text) {
  std::string safe = terminal_safe(text);
  if (safe.size() <= kOomMessageMax) return safe;
  std::size_t cut = kOomMessageMax;
  while (cut > 0 && (static_cast<unsigned char>(safe[cut]) & 0xC0) == 0x80) --cut;
  safe.resize(cut);
  return safe + "...";
}

StderrScan scan_from_fields(const nlohmann::json& f) {
  StderrScan s;
  s.state = field<std::string>(f, "stderr_scan").value_or("");
  s.oom_message = bounded_line(field<std::string>(f, "oom_message").value_or(""));
  s.oom_source = terminal_safe(field<std::string>(f, "oom_source").value_or(""));
  s.oom_tried_mib = mib_field(f, "oom_tried_mib");
  s.oom_free_mib = mib_field(f, "oom_free_mib");
  s.oom_capacity_mib = mib_field(f, "oom_capacity_mib");
  return s;
}

}  // namespace

std::string oom_message_text(std::string_view line) {
  return bounded_line(line);
}

int JobRecord::exit_status() const {
  if (signal) return 128 + *signal;
  return exit_code.value_or(0);
}

JobRecord job_from_marks(const std::vector<Mark>& marks) {
  JobRecord job;
  for (const auto& m : marks) {
    if (m.name == kJobStartMark) {
      job.present = true;
      job.start = m.t;
      job.command = field<std::string>(m.fields, "command").value_or("");
      job.pid = field<int>(m.fields, "pid");
    } else if (m.name == kJobEndMark) {
      job.present = true;
      job.end = m.t;
      job.exit_code = field<int>(m.fields, "exit_code");
      job.signal = field<int>(m.fields, "signal");
      job.gpus_basis = field<std::string>(m.fields, "gpus_basis").value_or("");
      job.not_measured = field<std::string>(m.fields, "not_measured").value_or("");
      job.marks_skipped = static_cast<std::uint64_t>(
          std::max(0.0, field<double>(m.fields, "marks_skipped").value_or(0)));
      job.marks_problem = field<std::string>(m.fields, "marks_problem").value_or("");
      job.stderr_scan = scan_from_fields(m.fields);
      job.gpus.clear();
      if (const auto g = m.fields.find("gpus"); g != m.fields.end() && g->is_array()) {
        for (const auto& x : *g) {
          if (x.is_number_integer()) job.gpus.push_back(x.get<int>());
        }
      }
    }
  }
  return job;
}

Mark job_start_mark(double t, const std::string& command, int pid) {
  Mark m;
  m.t = t;
  m.name = kJobStartMark;
  m.fields["command"] = command;
  m.fields["pid"] = pid;
  return m;
}

Mark job_end_mark(double t, const JobRecord& job) {
  Mark m;
  m.t = t;
  m.name = kJobEndMark;
  if (job.exit_code) m.fields["exit_code"] = *job.exit_code;
  if (job.signal) m.fields["signal"] = *job.signal;
  m.fields["gpus"] = job.gpus;
  if (!job.gpus_basis.empty()) m.fields["gpus_basis"] = job.gpus_basis;
  if (!job.not_measured.empty()) m.fields["not_measured"] = job.not_measured;
  if (job.marks_skipped > 0) m.fields["marks_skipped"] = job.marks_skipped;
  if (!job.marks_problem.empty()) m.fields["marks_problem"] = job.marks_problem;
  const StderrScan& s = job.stderr_scan;
  if (!s.state.empty()) m.fields["stderr_scan"] = s.state;
  if (!s.oom_message.empty()) m.fields["oom_message"] = s.oom_message;
  if (!s.oom_source.empty()) m.fields["oom_source"] = s.oom_source;
  if (s.oom_tried_mib) m.fields["oom_tried_mib"] = *s.oom_tried_mib;
  if (s.oom_free_mib) m.fields["oom_free_mib"] = *s.oom_free_mib;
  if (s.oom_capacity_mib) m.fields["oom_capacity_mib"] = *s.oom_capacity_mib;
  return m;
}

std::string join_command(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) {
    if (!out.empty()) out += ' ';
    const bool plain = !a.empty() && a.find_first_not_of(
                                         "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                         "0123456789-_./=:,+@%") == std::string::npos;
    if (plain) {
      out += a;
      continue;
    }
    out += '\'';
    for (char c : a) {
      if (c == '\'') {
        out += "'\\''";
      } else {
        out += c;
      }
    }
    out += '\'';
  }
  return out;
}

}  // namespace gpulens
