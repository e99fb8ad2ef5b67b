// SPDX-License-Identifier: Apache-2.0
#pragma once
// Bounds on what gpulens accepts from files and sockets it did not write itself.
// Each reader of outside input checks these before it allocates by a size the
// input chose; docs/reliability.md lists them with the reason for each value.
#include <cstddef>
#include <istream>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "core/result.hpp"

namespace gpulens {

// Arrays and objects inside one JSON line (a sample, a mark, a header). The
// JSON library copies, prints and frees values recursively, so an input nesting
// tens of thousands of levels would overflow the stack. Real lines nest 3 deep.
inline constexpr std::size_t kMaxJsonDepth = 64;
// One line of a recording or marks file: a sample of 4,096 processes with
// long command lines fits in about 2 MiB.
inline constexpr std::size_t kMaxLineBytes = std::size_t{8} << 20;
// What `gpulens run` reads of the job's marks file in all: a step mark is ~60
// bytes, so about a million marks; past it the rest is ignored, and said so.
// 1 GiB of garbage lines took over a minute after the job ended, unbounded.
inline constexpr std::size_t kMaxMarksFileBytes = std::size_t{64} << 20;
// Kernel record files `gpulens run --kernels` takes from the job (one per CUDA
// process); each is one line of the recording, so at most kMaxLineBytes.
inline constexpr std::size_t kMaxKernelRecordFiles = 1024;
// What `gpulens run --kernels` reads of the job's kernel record files in all: a
// day of 8 processes traced at the default windows is some 100-400 MiB of lines
// (a chunk line is 5-50 KiB); 256 MiB of valid lines costs the report about 19 s
// and 1.5 GB, and 1 GiB of junk took `run` 230 s, unbounded. Past it the rest is
// not read, and said so.
inline constexpr std::size_t kMaxKernelRecordBytes = std::size_t{256} << 20;
// Record lines `gpulens run --kernels` takes in all, whatever their size: each
// costs the report as a record, and 5 million one-line records (256 MiB) took
// the debug build's `run` 244 s. A day of 8 processes traced whole (a chunk
// every 2 s) is about 350,000 lines; at the default windows, 35,000.
inline constexpr std::size_t kMaxKernelRecordLines = 1'000'000;
// Launch records a recording's reader keeps: one per process of the job, and `run`
// writes at most 4,097 (cli/launches_setup.hpp).
inline constexpr std::size_t kMaxLaunchRecordLines = 8192;
// ... and at most this many bytes of them: a record `run` writes is at most about
// 0.5 MiB (500 names of 1 KiB), and `run` takes at most 64 MiB of them in all
// (cli/launches_setup.hpp), so a recording it wrote is read whole.
inline constexpr std::size_t kMaxLaunchRecordTotalBytes = std::size_t{64} << 20;
// Whether a reader holding `kept` launch records of `kept_bytes` takes one more of
// `line_bytes`.
constexpr bool keeps_launch_record(std::size_t kept, std::size_t kept_bytes,
                                   std::size_t line_bytes) {
  return kept < kMaxLaunchRecordLines && kept_bytes + line_bytes <= kMaxLaunchRecordTotalBytes;
}
// Lines of one kernel record file refused before the rest of that file is left
// unread: a process killed inside a write leaves one; thousands are not records.
inline constexpr std::size_t kMaxRefusedRecordLines = 64;
// Devices in a header (8 GPUs × 7 MIG instances is 56; 1,024 leaves room).
inline constexpr std::size_t kMaxDevices = 1024;
// Processes listed in one sample (NVML's own tools show at most a few hundred).
inline constexpr std::size_t kMaxProcsPerSample = 4096;
// Jobs a scheduler lists as holding one GPU (Slurm's shard or MPS gres share one
// GPU among a few jobs; the allocation reader itself keeps at most 64).
inline constexpr std::size_t kMaxAllocationsPerSample = 64;

// The index of the quote that closes the JSON string opened at text[open]
// (escapes skipped), or text.size() when it is not closed. The one scanner of
// strings for the passes that look at a line's bytes before it is parsed.
std::size_t json_string_end(std::string_view text, std::size_t open);

// True when `text` nests arrays/objects deeper than `max_depth` (brackets inside
// strings do not count). One pass, no recursion: safe on any input.
bool json_nesting_exceeds(std::string_view text, std::size_t max_depth = kMaxJsonDepth);

// nlohmann::json::parse that refuses nesting deeper than kMaxJsonDepth before a
// value is built. The error says why ("not valid JSON", "nested deeper than 64").
Result<nlohmann::json> parse_json_bounded(std::string_view text);

enum class LineRead { Line, TooLong, End };

// std::getline with a bound: reads one line (without '\n') into `line`. When the
// line passes `max_bytes` it stops at once and returns TooLong, leaving the rest
// of the line unread (skip_line() discards it); memory stays bounded on any input.
LineRead read_line_bounded(std::istream& in, std::string& line,
                           std::size_t max_bytes = kMaxLineBytes);
// Discards input up to and including the next '\n' without storing it.
void skip_line(std::istream& in);

}  // namespace gpulens
