// SPDX-License-Identifier: Apache-2.0
#pragma once
// Is device memory rising steadily, and when will it run out? A least-squares
// line over minutes from the growth's onset, accepted only when the rise is
// spread over it (not one step, as when a model is loaded), never gives back
// much, and memory did not stand as high before (not the saw-tooth of a loop
// that frees what it allocates). A rise too quick for minutes of history (8 GiB
// a second fills an H200 in 18 s) is judged on the readings themselves over
// the last minute, by the same tests, and only when it fills the device soon.
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
  // The fast path, over the peak of each fast_min_span_s/3 of the last min_span_s:
  // the same tests from the rise's onset (half the rising share: a staircase of a
  // few GiB a step is flat between steps), once it has lasted fast_min_span_s, while
  // memory is still rising, and when at its rate the device fills within
  // fast_horizon_factor times as long as it has been rising. A step's rise that
  // falls back (a saw-tooth) fails the tests as the slow path's does.
  double fast_min_span_s = 3;
  double fast_horizon_factor = 2;
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
  bool fast = false;    // judged by the fast path
  std::string why_not;  // the first test that failed, for evidence
};

struct MemoryPoint {
  double t;
  double mib;
};

MemoryTrend analyze_memory_trend(const std::deque<MemoryPoint>& points,
                                 std::optional<double> total_mib,
                                 const MemoryTrendSettings& settings);
// The fast path over `recent` (see MemoryTrendSettings): never growing without
// the device's total, since its test is how soon the device fills.
MemoryTrend analyze_fast_memory_trend(const std::deque<MemoryPoint>& recent,
                                      std::optional<double> total_mib,
                                      const MemoryTrendSettings& settings);

// Keeps one peak per bucket over the lookback, and for the fast path one peak per
// fast bucket over the last min_span_s.
class MemoryTrendTracker {
 public:
  explicit MemoryTrendTracker(MemoryTrendSettings settings = {}) : settings_(settings) {}
  // Returns true when the trend may have changed: a bucket closed, or memory
  // reached a new high of the last min_span_s (the fast path's cue).
  bool add(double t, double mib);
  void reset() {
    points_.clear();
    recent_.clear();
  }
  // The slow path's verdict, or the fast path's when only it sees growth.
  MemoryTrend analyze(std::optional<double> total_mib) const;
  const std::deque<MemoryPoint>& points() const { return points_; }

 private:
  static bool add_peak(std::deque<MemoryPoint>& points, std::optional<double>& start,
                       double bucket_s, double lookback_s, double t, double mib);
  MemoryTrendSettings settings_;
  std::deque<MemoryPoint> points_;
  std::optional<double> bucket_start_;
  std::deque<MemoryPoint> recent_;
  std::optional<double> recent_start_;
  bool rising_ = false;  // the newest reading is the highest of recent_, above the one before
};

}  // namespace gpulens::diagnosis
