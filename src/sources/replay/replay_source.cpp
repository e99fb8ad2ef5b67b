// SPDX-License-Identifier: Apache-2.0
#include "sources/replay/replay_source.hpp"

#include <algorithm>
#include <cmath>

namespace gpulens {
namespace {

// Samples within this many seconds of each other belong to the same tick.
constexpr double kSameTick = 1e-6;

double event_time(const TraceEvent& e) {
  return std::visit([](const auto& v) { return v.t; }, e);
}

}  // namespace

ReplaySource::ReplaySource(TraceReader reader, double speed, std::vector<int> gpus)
    : reader_(std::move(reader)), header_(reader_.header()), speed_(speed), gpus_(std::move(gpus)) {
  if (!gpus_.empty()) {
    std::erase_if(header_.devices, [&](const DeviceInfo& d) { return !wanted(d.index); });
  }
}

Result<std::unique_ptr<ReplaySource>> ReplaySource::open(const std::string& path, double speed,
                                                         bool lenient,
                                                         const std::vector<int>& gpus) {
  auto reader = TraceReader::open(path, TraceReadOptions{.lenient = lenient});
  if (!reader) return reader.error();
  return std::unique_ptr<ReplaySource>(new ReplaySource(std::move(*reader), speed, gpus));
}

bool ReplaySource::wanted(int gpu) const {
  return gpus_.empty() || std::find(gpus_.begin(), gpus_.end(), gpu) != gpus_.end();
}

bool ReplaySource::wait_until_due(double trace_t) {
  std::unique_lock lock(mutex_);
  if (stopped_) return false;
  if (speed_ <= 0) return true;
  if (!first_t_) {
    first_t_ = trace_t;
    wall_start_ = std::chrono::steady_clock::now();
    return true;
  }
  const auto offset = std::chrono::duration<double>((trace_t - *first_t_) / speed_);
  const auto due =
      wall_start_ + std::chrono::duration_cast<std::chrono::steady_clock::duration>(offset);
  cv_.wait_until(lock, due, [&] { return stopped_; });
  return !stopped_;
}

void ReplaySource::stop() {
  {
    std::lock_guard lock(mutex_);
    stopped_ = true;
  }
  cv_.notify_all();
}

Result<std::optional<Tick>> ReplaySource::next() {
  Tick tick;
  bool have_sample = false;
  // Gather marks up to and including the next sample time, then every sample
  // that shares that time.
  while (true) {
    if (!pending_ && !exhausted_) {
      auto event = reader_.next();
      if (!event) return event.error();
      if (event->has_value()) {
        pending_ = std::move(**event);
      } else {
        exhausted_ = true;
      }
    }
    if (!pending_) break;
    const double t = event_time(*pending_);
    if (auto* mark = std::get_if<Mark>(&*pending_)) {
      if (have_sample && t > tick.t + kSameTick) break;
      tick.marks.push_back(std::move(*mark));
      pending_.reset();
      continue;
    }
    auto& sample = std::get<Sample>(*pending_);
    if (have_sample && std::fabs(t - tick.t) > kSameTick) break;
    if (!have_sample) {
      have_sample = true;
      tick.t = t;
    }
    if (wanted(sample.gpu)) tick.samples.push_back(std::move(sample));
    pending_.reset();
  }
  if (!have_sample && tick.marks.empty()) return std::optional<Tick>{};
  if (!have_sample) tick.t = tick.marks.back().t;
  if (!wait_until_due(tick.t)) return std::optional<Tick>{};
  return std::optional<Tick>{std::move(tick)};
}

}  // namespace gpulens
