// SPDX-License-Identifier: Apache-2.0
#include "sources/replay/replay_source.hpp"

#include <algorithm>

namespace gpulens::sources {
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
  std::optional<Tick> tick;
  while (!tick && !finished_) {
    auto event = reader_.next();
    if (!event) return event.error();
    if (!event->has_value()) {
      finished_ = true;
      tick = grouper_.finish();
      break;
    }
    tick = std::visit([&](auto&& e) { return grouper_.add(std::move(e)); }, std::move(**event));
  }
  if (!tick) return std::optional<Tick>{};
  std::erase_if(tick->samples, [&](const Sample& s) { return !wanted(s.gpu); });
  if (!wait_until_due(tick->t)) return std::optional<Tick>{};
  return tick;
}

}  // namespace gpulens::sources
