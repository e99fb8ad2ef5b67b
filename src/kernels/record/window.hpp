// SPDX-License-Identifier: Apache-2.0
#pragma once
// A kernel trace window's values (docs/kernels-agent.md), the one set of types
// from the injection library to the agent, its history and its API:
//
//   WindowSummary  what a process sends as a window closes (summary_datagram.hpp):
//                  the window's header and one DeviceWork per CUDA device;
//   KernelWindow   one process's work on one of the node's GPUs over one window:
//                  that header and that device's DeviceWork, with who ran it as
//                  the agent saw it. The agent's ring (agent/kernel_store.hpp),
//                  the SQLite history (store/kernel_windows.hpp) and
//                  /api/v1/kernels all hold this type, so nothing converts it.
//
// Plain values: nlohmann's JSON and gpulens are not needed (the injection
// library compiles summary_datagram.cpp, which includes this, into the job).
#include <cstdint>
#include <string>
#include <vector>

namespace gpulens::kernels {

// a + b, held at the largest value instead of wrapping: sums of many windows
// must never go backwards.
constexpr std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) {
  return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

struct KernelTime {
  std::string name;  // demangled, at most kMaxSummaryNameBytes
  std::uint64_t launches = 0, ns = 0;
  bool operator==(const KernelTime&) const = default;
};

struct WorkTotal {  // collectives, copies or memsets of one device over the window
  std::uint64_t count = 0, bytes = 0, ns = 0;
  bool operator==(const WorkTotal&) const = default;
};

// What a window says of itself, whatever the device: its times, and what the
// sender could not record or send.
struct WindowHeader {
  std::int64_t start_unix_ns = 0, end_unix_ns = 0;
  bool window = true;                   // a trace window, else a chunk of a whole-job trace
  std::uint64_t cupti_dropped = 0;      // records CUPTI dropped in it
  std::uint64_t summaries_dropped = 0;  // earlier summaries the process could not send
  bool operator==(const WindowHeader&) const = default;
};

// One device's work over one window: what the library measures and the agent keeps.
struct DeviceWork {
  std::uint32_t device = 0;  // the process's CUDA ordinal
  std::uint64_t busy_ns = 0, idle_ns = 0;
  std::vector<KernelTime> top;  // by GPU time, longest first
  std::uint64_t other_kernels = 0, other_launches = 0, other_ns = 0;
  WorkTotal collectives;  // kernels of a communication library (kernel_names.hpp), bytes 0
  WorkTotal copies, memsets;
  bool operator==(const DeviceWork&) const = default;
};

struct WindowSummary : WindowHeader {
  std::uint64_t seq = 0;  // the chunk's seq in this process
  std::vector<DeviceWork> devices;
};

// A process's Kubernetes pod as the kubelet's logs name it (the agent's
// sources::KubeRef, kept here as text so that the store needs no sources).
struct PodNames {
  std::string namespace_name, pod;
  std::string container;  // empty when only the pod is known
  bool operator==(const PodNames&) const = default;
};

struct KernelWindow : WindowHeader, DeviceWork {
  int gpu = 0;            // the agent's GPU index
  std::uint32_t pid = 0;  // from the kernel's peer credentials, never the datagram
  std::uint32_t uid = 0;  // likewise
  std::string process;    // the agent's own name for the pid (comm)
  PodNames kube;          // the process's pod on this GPU; empty when unknown
  bool operator==(const KernelWindow&) const = default;
};

}  // namespace gpulens::kernels
