// SPDX-License-Identifier: Apache-2.0
#pragma once
// Is device memory rising steadily, and when will it run out? A least-squares
// line over minutes from the growth's onset, accepted only when the rise is
// spread over it (not one step, as when a model is loaded), never gives back
// much, and memory did not stand as high before (not the saw-tooth of a loop
// that frees what it allocates).
#include <deque>
#include <optional>
#include <string>

namespace gpulens::diagnosis {

struct MemoryTrendSettings {
  double lookback_s = 600;          // history the line is fitted over
  double min_span_s = 60;           // no verdict on less history than this
  double bucket_s = 5;              // one point (the peak) per bucket
  double min_r2 = 0.8;              // fit quality of the line
  double min_rising_share = 0.6;    // share of bucket-to-bucket steps that rise
  double max_step_share = 0.5;      // largest single rise over the total rise
  double max_drawdown_share = 0.1;  // largest fall since the onset over the rise
  // How high memory stood before the onset, over the growth since: an earlier
  // tooth of a saw-tooth stood as high; another process that came and went did not.
  double max_prior_peak_share = 0.5;
  double min_growth_mib = 256;       // rise over the fitted span worth a word
  double max_time_to_oom_s = 86400;  // beyond this forecast it is not urgent
};

struct MemoryTrend {
  bool growing = false;
  double span_s = 0;
  double slope_mib_s = 0;
  double r2 = 0;
  double rising_share = 0;
  double step_share = 0;
  double drawdown_share = 0;
  double prior_peak_share = 0;
  double growth_mib = 0;   // fitted rise over the span
  double current_mib = 0;  // the newest point
  std::optional<double> time_to_oom_s;
  std::string why_not;  // the first test that failed, for evidence
};

struct MemoryPoint {
  double t;
  double mib;
};

MemoryTrend analyze_memory_trend(const std::deque<MemoryPoint>& points,
                                 std::optional<double> total_mib,
                                 const MemoryTrendSettings& settings);

// Keeps one peak per bucket over the lookback.
class MemoryTrendTracker {
 public:
  explicit MemoryTrendTracker(MemoryTrendSettings settings = {}) : settings_(settings) {}
  // Returns true when a bucket closed (a new point is ready to analyze).
  bool add(double t, double mib);
  void reset() { points_.clear(); }
  MemoryTrend analyze(std::optional<double> total_mib) const;
  const std::deque<MemoryPoint>& points() const { return points_; }

 private:
  MemoryTrendSettings settings_;
  std::deque<MemoryPoint> points_;
  std::optional<double> bucket_start_;
};

}  // namespace gpulens::diagnosis
