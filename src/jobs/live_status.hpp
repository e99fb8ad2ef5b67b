// SPDX-License-Identifier: Apache-2.0
#pragma once
// The one-line status `gpulens run --live` prints every few seconds: per GPU
// the diagnosed state and the means since the last line, and the job's model
// FLOP/s when it reports steps.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/sample.hpp"
#include "diagnosis/engine.hpp"

namespace gpulens::jobs {

class LiveStatus {
 public:
  LiveStatus(const TraceHeader& header, std::optional<double> peak_total_tflops);
  void on_tick(const Tick& tick);
  void on_mark(const Mark& mark);
  // The line for the period since the last call (or the start); restarts the period.
  // `gpus` empty = every GPU seen.
  std::string take_line(double now, const std::vector<int>& gpus);

 private:
  struct Means {
    double n = 0;
    std::map<Metric, std::pair<double, double>> sum;  // metric -> (sum, count)
  };
  diagnosis::DiagnosisEngine engine_;
  std::optional<double> peak_total_tflops_;
  std::optional<double> start_;
  double period_start_ = 0;
  std::map<int, Means> means_;
  double step_flops_ = 0;
  long steps_ = 0;
};

}  // namespace gpulens::jobs
