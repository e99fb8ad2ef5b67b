// SPDX-License-Identifier: Apache-2.0
#pragma once
// Plays a gpu-trace recording as ticks, paced like the original or faster.
#include <condition_variable>
#include <mutex>

#include "core/tick_grouper.hpp"
#include "core/trace_reader.hpp"
#include "sources/tick_source.hpp"

namespace gpulens::sources {

class ReplaySource final : public TickSource {
 public:
  // speed: 1 = real time, X = X times faster, 0 = as fast as possible.
  static Result<std::unique_ptr<ReplaySource>> open(const std::string& path, double speed,
                                                    bool lenient,
                                                    const std::vector<int>& gpus = {});
  const TraceHeader& header() const override { return header_; }
  Result<std::optional<Tick>> next() override;
  void stop() override;
  bool live() const override { return false; }
  // Reader warnings (truncated last line, skipped lines), available once next()
  // has returned nullopt.
  std::vector<std::string> warnings() const override { return reader_.warnings(); }

 private:
  ReplaySource(TraceReader reader, double speed, std::vector<int> gpus);
  bool wanted(int gpu) const;
  bool wait_until_due(double trace_t);  // false when stopped

  TraceReader reader_;
  TraceHeader header_;
  double speed_;
  std::vector<int> gpus_;
  TickGrouper grouper_;
  bool finished_ = false;  // the reader reached the end
  std::optional<double> first_t_;
  std::chrono::steady_clock::time_point wall_start_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool stopped_ = false;
};

}  // namespace gpulens::sources
