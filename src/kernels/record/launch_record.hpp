// SPDX-License-Identifier: Apache-2.0
#pragma once
// The launch-count record: what libgpulens_launches.so (src/launch_count) writes for
// one process of a job, and `gpulens run` copies into the recording as one line
// {"x_launches": 1, ...} (docs/kernels.md, "Launch counts"). Counts only: how often
// each kernel was launched, not for how long it ran. Written by the library and read
// by gpulens (launch_record_read.hpp), so this half needs nlohmann's JSON only.
#include <cstdint>
#include <string>
#include <vector>

namespace gpulens::kernels {

namespace launch_record {
inline constexpr const char* version_key = "x_launches";
inline constexpr int version = 1;
// Kernels a record names, the most launched first; the rest are summed.
inline constexpr std::size_t max_kernels = 500;
// A kernel name longer than this is cut (C++ templates run to tens of kilobytes).
inline constexpr std::size_t max_name_bytes = 1024;
// A process name longer than this is cut (the kernel's comm holds 15 bytes).
inline constexpr std::size_t max_comm_bytes = 64;
}  // namespace launch_record

// The same record as one datagram to the node agent ($GPULENS_LAUNCHES_AGENT,
// docs/kernels-agent.md): bounded as a window summary is, as any local process may
// send one and the agent reads each whole.
namespace launch_datagram {
inline constexpr std::size_t max_bytes = std::size_t{16} << 10;
inline constexpr std::size_t max_kernels = 32;      // the most launched; the rest unlisted
inline constexpr std::size_t max_name_bytes = 256;  // a kernel name longer is cut
}  // namespace launch_datagram

struct KernelLaunches {
  std::string name;  // demangled; "?" when the driver gave none
  std::uint64_t launches = 0;
  bool operator==(const KernelLaunches&) const = default;
};

struct LaunchRecord {
  std::uint32_t pid = 0;
  std::string comm;             // the process's short name (/proc/self/comm)
  std::int64_t first_ns = 0;    // Unix ns of the first launch counted
  std::int64_t written_ns = 0;  // Unix ns when these counts were taken
  // True when written at the process's exit; false for the last periodic write of a
  // process that ended without one (os._exit, exec, a kill): counts up to written_ns.
  bool final = false;
  std::uint64_t kernel_launches = 0;    // cuLaunchKernel(Ex) calls, all of them
  std::uint64_t graph_launches = 0;     // cuGraphLaunch calls (their kernels are not seen)
  std::uint64_t graphs = 0;             // distinct graphs launched
  std::vector<KernelLaunches> kernels;  // the most launched first, at most max_kernels
  // Kernel launches not in `kernels`: past the list's end, or of a thread that had
  // more distinct kernels than its table holds.
  std::uint64_t unlisted_launches = 0;
  bool operator==(const LaunchRecord&) const = default;
};

// The record as one line of JSON (no newline), the version key first so that a
// reader can tell the line from its head; invalid UTF-8 in a name is replaced.
std::string launch_record_line(const LaunchRecord& r);

// The record as a datagram (launch_datagram): its line, with names cut, and the least
// launched kernels past max_kernels, or past what fits in max_bytes, counted as
// unlisted. `r.kernels` must be the most launched first, as records are.
std::string launch_datagram_of(LaunchRecord r);

}  // namespace gpulens::kernels
