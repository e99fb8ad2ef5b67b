// SPDX-License-Identifier: Apache-2.0
#pragma once
// The injection library's one process-wide object (libgpulens_kernels.so),
// composed of its seams, each a type that owns its members and its lock:
//   cupti    the CUPTI seam: libcupti, its entry points, the kinds, the status
//            (cupti_seam.hpp);
//   records  what CUPTI's buffer callbacks delivered, until a chunk drains it,
//            and the record's clock (records.hpp);
//   windows  when CUPTI records: the schedule, the open window, the windows
//            recorded (trace_control.hpp);
//   sender   where it goes: the record file, its chunks, the node agent
//            (sender.hpp).
// Locks are taken in this order only, never the other way:
//   windows.toggle -> sender.writing -> records' lock -> the CUPTI seam's lock.
// CUPTI's buffer callback takes the records' lock on CUPTI's thread, or on ours
// inside a forced flush (which happens under `toggle`, never under `writing`).
#include <cstdint>

#include "inject/cupti_seam.hpp"
#include "inject/records.hpp"
#include "inject/sender.hpp"
#include "inject/trace_control.hpp"

namespace gpulens::inject {

struct Injection {
  CuptiSeam cupti;
  Records records;
  Windows windows;
  Sender sender;
  // Set at cuInit (InitializeInjection), before any thread of ours starts.
  bool started = false;
  // The job registered its own CUPTI buffers before cuInit: nothing to record.
  bool job_registered_first = false;
  // A fork of a CUDA process: it writes nothing (entry_points.cpp).
  bool forked_child = false;
};

// Never destroyed: exit handlers of other libraries may run after ours.
Injection& injection();

std::int64_t unix_now_ns();

}  // namespace gpulens::inject
