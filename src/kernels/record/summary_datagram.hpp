// SPDX-License-Identifier: Apache-2.0
#pragma once
// The datagram a job's injection library sends the node's agent as each trace
// window closes (docs/kernels-agent.md): the window's summary (window.hpp's
// WindowSummary: per CUDA device the top kernels by GPU time with an `other`
// remainder, the idle time, and the collectives', copies' and memsets' totals)
// as one JSON datagram of at most kMaxSummaryBytes.
//
// Built from the window's version-4 chunk (chunk_record.hpp) by the library
// (libgpulens_kernels.so compiles this file in: nlohmann's JSON and the standard
// library only), read back by the agent. The reader trusts nothing: the sender is
// any local process, so every field is checked and every list and name bounded.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "kernels/record/chunk_record.hpp"
#include "kernels/record/window.hpp"

namespace gpulens::kernels {

inline constexpr int kSummaryVersion = 1;
// One datagram: the sender shrinks its top lists until it fits, the reader
// refuses anything longer.
inline constexpr std::size_t kMaxSummaryBytes = std::size_t{16} << 10;
// Kernels named per device; the rest is `other`.
inline constexpr std::size_t kSummaryTopKernels = 10;
// What a reader accepts: devices per summary, kernels per device, bytes per name.
inline constexpr std::size_t kMaxSummaryDevices = 16;
inline constexpr std::size_t kMaxSummaryTop = 32;
inline constexpr std::size_t kMaxSummaryNameBytes = 256;

// Kernels, copies or memsets a device runs at once, at most (a reader's bound on
// a window's GPU time: 128 concurrent kernels is the most any GPU runs).
inline constexpr std::uint64_t kMaxConcurrentWork = 128;

// The names a process's chunks refer to, gathered as their `names` lines come,
// so that each window's summary can name its kernels.
class SummaryBuilder {
 public:
  void add_names(const NamesRecord& names);
  // The chunk in brief; `base_unix_ns` is the record's clock base (ProcessRecord).
  WindowSummary summarise(const ChunkRecord& chunk, std::int64_t base_unix_ns,
                          std::size_t top = kSummaryTopKernels) const;

 private:
  struct Config {
    std::uint32_t name = 0, device = 0;
  };
  std::unordered_map<std::uint32_t, Config> configs_;
  std::unordered_map<std::uint32_t, std::string> names_;
  std::unordered_map<std::uint32_t, bool> collective_;  // by name id
};

// The datagram: at most kMaxSummaryBytes (the top lists shortened into `other`
// until it fits).
std::string encode_summary(WindowSummary s);

// The datagram read back and checked; nullopt with `why` set when it is not one.
std::optional<WindowSummary> decode_summary(std::string_view bytes, std::string& why);

// A name cut to at most `max_bytes` without splitting a UTF-8 sequence.
std::string cut_name(std::string_view name, std::size_t max_bytes);

}  // namespace gpulens::kernels
