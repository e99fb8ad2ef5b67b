// SPDX-License-Identifier: Apache-2.0
// Phase marks for gpu-trace recordings (docs/trace-format.md): one JSON object
// per line, {"t": <unix seconds, 3 decimals>, "mark": "<phase>:start|end", ...}.
#pragma once

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace gw {

// Extra fields for one mark. Values are kept as ready-made JSON text.
class Fields {
 public:
  Fields& num(const std::string& key, double v);
  Fields& integer(const std::string& key, long long v);
  Fields& str(const std::string& key, const std::string& v);
  Fields& boolean(const std::string& key, bool v);
  Fields& raw(const std::string& key, const std::string& json) {  // already JSON text
    items_.emplace_back(key, json);
    return *this;
  }
  const std::vector<std::pair<std::string, std::string>>& items() const { return items_; }

 private:
  std::vector<std::pair<std::string, std::string>> items_;
};

std::string json_escape(const std::string& s);

// Writes marks to a file (appended, so several runs can share one marks file),
// to stdout for "-", or nowhere when no path is given. Each line is flushed at
// once: a collector tailing the file, or a run killed mid-phase, sees every
// mark written so far.
class MarkWriter {
 public:
  MarkWriter() = default;
  ~MarkWriter();
  MarkWriter(const MarkWriter&) = delete;
  MarkWriter& operator=(const MarkWriter&) = delete;

  // Returns false (and leaves the writer disabled) if the file cannot be opened.
  bool open(const std::string& path);
  void write(const std::string& mark, const Fields& f = {});

  // The phase whose :start was written and whose :end is still due; fatal()
  // uses it to close the phase on an error.
  void set_open_phase(const std::string& name) { open_phase_ = name; }
  const std::string& open_phase() const { return open_phase_; }

 private:
  FILE* fp_ = nullptr;
  bool owned_ = false;
  std::string open_phase_;
};

MarkWriter& marks();  // the process-wide writer

}  // namespace gw
