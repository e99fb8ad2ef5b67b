#pragma once
// What every front end reads: ticks from a live sampler or a replayed trace.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/result.hpp"
#include "core/sample.hpp"

namespace gpulens {

class TickSource {
 public:
  virtual ~TickSource() = default;
  virtual const TraceHeader& header() const = 0;
  // Blocks until the next tick is due and returns it; nullopt at the end (trace
  // finished, --count reached, or stop() called). Errors name their cause.
  virtual Result<std::optional<Tick>> next() = 0;
  // Asks a blocked next() to return soon; safe from a signal-handling thread.
  virtual void stop() = 0;
  // Whether ticks come from live hardware (as opposed to a recording).
  virtual bool live() const = 0;
};

struct SourceOptions {
  std::string replay;       // trace file; empty = live
  double speed = 1.0;       // replay pacing: 1 real time, X faster, 0 as fast as possible
  bool lenient = false;     // replay: skip malformed lines
  double interval_s = 1.0;  // live sampling interval
  std::vector<int> gpus;    // empty = all
  bool gpm = true;          // live: read GPM metrics where supported
  bool processes = true;    // live: list processes on each GPU
  // live: seconds between reads of each process's SM share (a ~2 ms driver call)
  double process_util_every_s = 5.0;
  bool cmdline = false;  // live: include process command lines
  std::string procfs = "/proc";
  std::string marks_path;  // live: JSON-lines marks file to merge into ticks
};

// Opens a replay source when options.replay is set, else the live NVML sampler.
Result<std::unique_ptr<TickSource>> open_tick_source(const SourceOptions& options);

}  // namespace gpulens
