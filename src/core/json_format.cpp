// SPDX-License-Identifier: Apache-2.0
#include "core/json_format.hpp"

#include <fmt/format.h>

#include <cmath>
#include <initializer_list>
#include <utility>

#include "core/json_number.hpp"
#include "core/text_safety.hpp"

namespace gpulens {

void append_number(std::string& out, double value) {
  if (!std::isfinite(value)) {
    out += "null";  // never written for real readings; keeps the line valid JSON
    return;
  }
  append_shortest(out, round_to(value, decimals::kReading));
}

void append_json_string(std::string& out, std::string_view text) {
  out += '"';
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (static_cast<unsigned char>(c) >= 0x80) {
      // Process names and command lines are bytes, not text: a name with a lone
      // 0xFF made the whole line invalid JSON, so gpulens could not read back a
      // recording it wrote. A byte outside valid UTF-8 becomes U+FFFD.
      const std::size_t len = utf8_sequence_length(text.substr(i));
      if (len == 0) {
        out += "\\ufffd";
      } else {
        out.append(text.substr(i, len));
        i += len - 1;
      }
      continue;
    }
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          fmt::format_to(std::back_inserter(out), "\\u{:04x}", static_cast<unsigned>(c));
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

namespace {

void append_optional(std::string& out, std::string_view key, const std::optional<double>& v) {
  if (!v) return;
  out += ", ";
  append_json_string(out, key);
  out += ": ";
  append_number(out, *v);
}

// The known text fields of an object: `"key": "value"` for each non-empty value,
// separated by commas; `first` says whether the object has no field yet.
void append_text_fields(
    std::string& out, bool& first,
    std::initializer_list<std::pair<std::string_view, const std::string*>> fields) {
  for (const auto& [key, value] : fields) {
    if (value->empty()) continue;
    if (!first) out += ", ";
    first = false;
    append_json_string(out, key);
    out += ": ";
    append_json_string(out, *value);
  }
}

// ", \"x_slurm\": {...}": an object of its own (the format asks additions beyond it
// to be prefixed x_), with only the fields that are known.
void append_slurm(std::string& out, const SlurmJob& s) {
  out += ", \"x_slurm\": {";
  bool first = true;
  append_text_fields(out, first,
                     {{"job", &s.job},
                      {"step", &s.step},
                      {"user", &s.user},
                      {"account", &s.account},
                      {"array_job", &s.array_job},
                      {"array_task", &s.array_task},
                      {"from", &s.from},
                      {"unknown", &s.unknown}});
  out += '}';
}

void append_process(std::string& out, const ProcessSample& p) {
  fmt::format_to(std::back_inserter(out), "{{\"pid\": {}, \"name\": ", p.pid);
  append_json_string(out, p.name);
  append_optional(out, "used_mib", p.used_mib);
  append_optional(out, "sm_util", p.sm_util);
  append_optional(out, "cpu_pct", p.cpu_pct);
  append_optional(out, "rss_mib", p.rss_mib);
  if (p.ppid) fmt::format_to(std::back_inserter(out), ", \"ppid\": {}", *p.ppid);
  bool first = false;  // pid and name come first
  append_text_fields(
      out, first,
      {{"user", &p.user}, {"container", &p.container}, {"pod", &p.pod}, {"cmdline", &p.cmdline}});
  if (p.slurm) append_slurm(out, *p.slurm);
  out += '}';
}

// ", \"x_allocation\": [{...}]": the jobs a scheduler says hold the GPU.
void append_allocations(std::string& out, const std::vector<GpuAllocation>& allocations) {
  out += ", \"x_allocation\": [";
  bool first_entry = true;
  for (const auto& a : allocations) {
    if (!first_entry) out += ", ";
    first_entry = false;
    out += '{';
    bool first = true;
    append_text_fields(out, first,
                       {{"scheduler", &a.scheduler},
                        {"job", &a.job},
                        {"user", &a.user},
                        {"account", &a.account},
                        {"partition", &a.partition},
                        {"namespace", &a.namespace_name},
                        {"pod", &a.pod},
                        {"container", &a.container}});
    if (a.since) {
      out += first ? "\"since\": " : ", \"since\": ";
      fmt::format_to(std::back_inserter(out), "{:.3f}", *a.since);
    }
    out += '}';
  }
  out += ']';
}

}  // namespace

void append_sample_json(std::string& out, const Sample& sample) {
  out += "{\"t\": ";
  fmt::format_to(std::back_inserter(out), "{:.3f}", sample.t);
  fmt::format_to(std::back_inserter(out), ", \"gpu\": {}", sample.gpu);
  for (const auto& info : all_metrics()) {
    const auto v = sample.values.get(info.id);
    if (!v) continue;
    out += ", \"";
    out += info.key;
    out += "\": ";
    append_number(out, *v);
  }
  if (sample.procs) {
    out += ", \"procs\": [";
    bool first = true;
    for (const auto& p : *sample.procs) {
      if (!first) out += ", ";
      first = false;
      append_process(out, p);
    }
    out += ']';
  }
  if (sample.allocations) append_allocations(out, *sample.allocations);
  for (const auto& [key, value] : sample.extra.items()) {
    out += ", ";
    append_json_string(out, key);
    out += ": ";
    out += value.dump();
  }
  out += '}';
}

}  // namespace gpulens
