// SPDX-License-Identifier: Apache-2.0
#pragma once
// One session with a DCGM host engine (or an embedded one): the profiling fields of
// dcgm_fields.hpp watched on the GPUs that lack GPM, their latest values read by
// poll() into a cache, and the cache read by the sampler's threads. Only poll()
// calls DCGM, so a slow or vanished host engine never holds up a tick: the caller
// runs poll() on a thread of its own (start()). A lost connection is retried with
// backoff; until then, and for any value older than stale_after_s, readings are absent.
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/sample.hpp"
#include "sources/dcgm/dcgm_api.hpp"
#include "sources/gpu_collector.hpp"

namespace gpulens::sources {

struct DcgmOptions {
  enum class Mode { Off, Auto, Connect, Embedded };
  // Auto: connect to localhost:5555 where a GPU lacks GPM; Connect: the same, to the
  // address asked for; Embedded: start a host engine inside gpulens (DCGM profiles
  // only as root); Off: never load libdcgm.
  Mode mode = Mode::Auto;
  std::string address = "localhost:5555";  // HOST[:PORT], or a unix socket's path (/...)
  double update_period_s = 1.0;            // DCGM's own sampling of the fields
  double poll_period_s = 1.0;              // how often poll() reads their latest values
  double stale_after_s = 0;                // 0: 3 update periods, at least 3 s
  double connect_timeout_s = 1.0;
  double backoff_min_s = 2;
  double backoff_max_s = 120;
  const DcgmApi* api = nullptr;         // inject (tests); nullptr = dlopen libdcgm
  std::function<double()> unix_s;       // wall clock; empty = core/clock's
  std::function<double()> monotonic_s;  // for backoff; empty = core/clock's
};

// Parses `--dcgm`: auto, off, embedded, or HOST[:PORT] / a socket path.
Result<DcgmOptions> parse_dcgm_option(const std::string& text);

// A GPU the session should read: gpulens's index and NVML's UUID ("GPU-...").
struct DcgmTarget {
  int gpu = 0;
  std::string uuid;
};

class DcgmProfiler {
 public:
  // Loads nothing: `api` must be loaded (and outlive the profiler). Tries the first
  // session at once, bounded by connect_timeout_s; its outcome is in status().
  DcgmProfiler(const DcgmApi& api, std::vector<DcgmTarget> targets, DcgmOptions options);
  ~DcgmProfiler();
  DcgmProfiler(const DcgmProfiler&) = delete;
  DcgmProfiler& operator=(const DcgmProfiler&) = delete;

  // One round: (re)connects when due, else reads the latest values into the cache.
  void poll();
  // Runs poll() every poll_period_s on a thread of its own until destroyed.
  void start();

  // The readings of `gpu` that are fresh now, in gpulens's units; empty when none.
  MetricValues latest(int gpu) const;
  // Which metrics the session watches on `gpu` (empty while not watching).
  std::vector<Metric> watched(int gpu) const;
  ProfilerStatus status() const;

 private:
  struct Cached {
    double value = 0;
    double t = 0;  // DCGM's timestamp, Unix seconds
  };
  bool open_session();
  void close_session();
  void read_values();
  // Ends the session, says why and schedules the next attempt (backoff doubles).
  void fail(const std::string& why);
  double unix_now_s() const;
  double monotonic_now_s() const;

  const DcgmApi& api_;
  std::vector<DcgmTarget> targets_;
  DcgmOptions options_;
  double stale_after_s_;

  // Touched by poll() only (one thread at a time).
  bool initialized_ = false;
  bool connected_ = false;
  bool embedded_ = false;
  dcgm::Handle handle_ = 0;
  dcgm::GpuGroup group_ = 0;
  dcgm::FieldGroup field_group_ = 0;
  bool watching_ = false;
  bool watched_once_ = false;
  std::vector<unsigned short> fields_;              // watched
  std::vector<dcgm::GroupEntityPair> entities_;     // DCGM's ids of the targets
  std::map<unsigned, int> gpu_of_entity_;           // DCGM id -> gpulens index
  std::vector<dcgm::FieldValue_v2> values_buffer_;  // entities x fields
  double next_attempt_ = 0;                         // monotonic
  double backoff_s_ = 0;

  mutable std::mutex mutex_;  // guards what sample threads read: cache_, status_
  std::map<int, std::map<Metric, Cached>> cache_;
  std::map<int, std::vector<Metric>> watched_;
  ProfilerStatus status_;

  std::mutex stop_mutex_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace gpulens::sources
