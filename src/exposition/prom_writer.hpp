// SPDX-License-Identifier: Apache-2.0
#pragma once
// Writes the Prometheus text exposition format (version 0.0.4): HELP and TYPE
// once per family, samples of a family together, label values escaped, and
// numbers in the shortest form that reads back exactly.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpulens::exposition {

// NVML and the tick speak MiB; Prometheus's convention is base units (bytes).
inline constexpr double kMib = 1024.0 * 1024.0;

using Label = std::pair<std::string_view, std::string_view>;

// `name="value"` pairs joined by commas, values escaped; no braces.
std::string render_labels(std::initializer_list<Label> labels);
void append_label(std::string& labels, std::string_view name, std::string_view value);

class PromWriter {
 public:
  explicit PromWriter(std::string& out) : out_(out) {}
  // Starts a family; `type` is "gauge" or "counter".
  void family(std::string_view name, std::string_view type, std::string_view help);
  // A sample of the current family; `labels` is render_labels() output.
  void sample(std::string_view name, std::string_view labels, double value);
  // Labels given as rendered base labels plus one extra pair.
  void sample(std::string_view name, std::string_view labels, std::string_view extra_name,
              std::string_view extra_value, double value);

 private:
  std::string& out_;
};

// "1", "0.25", "1.2e+10", "NaN", "+Inf": what Prometheus parses back exactly.
void append_prom_number(std::string& out, double value);

// `value` converted by `factor`. A factor below 1 (% to ratio, mJ to J) divides
// by its inverse instead: one rounding, so 0.07 % reads 0.0007, not 0.0007000000000000001.
double scaled(double value, double factor);

}  // namespace gpulens::exposition
