// SPDX-License-Identifier: Apache-2.0
#include "verdict/steady_state.hpp"

#include <algorithm>
#include <map>

namespace gpulens::verdict {

bool is_work_state(diagnosis::GpuState state) {
  return state != diagnosis::GpuState::Idle && state != diagnosis::GpuState::IdleHoldingMemory &&
         state != diagnosis::GpuState::Unknown && state != diagnosis::GpuState::Count;
}

bool SteadyState::in_edges(int gpu, double from, double to) const {
  const GpuSpan* s = span(gpu);
  if (!edges_apart || s == nullptr || !s->work_start) return false;
  constexpr double kSlack = 1e-6;
  return to <= *s->work_start + kSlack || from >= *s->work_end - kSlack;
}

const GpuSpan* SteadyState::span(int gpu) const {
  for (const auto& s : gpus) {
    if (s.gpu == gpu) return &s;
  }
  return nullptr;
}

SteadyState find_steady_state(const diagnosis::DiagnosisReport& report, bool edges_apart) {
  SteadyState out;
  out.edges_apart = edges_apart;
  std::map<int, std::vector<const diagnosis::TimelineRun*>> by_gpu;
  for (const auto& run : report.timeline) by_gpu[run.gpu].push_back(&run);
  for (auto& [gpu, runs] : by_gpu) {
    std::stable_sort(runs.begin(), runs.end(),
                     [](const diagnosis::TimelineRun* a, const diagnosis::TimelineRun* b) {
                       return a->start < b->start;
                     });
    GpuSpan span;
    span.gpu = gpu;
    span.start = runs.front()->start;
    span.end = runs.back()->end;
    for (const double min_s : {kSustainedWorkS, 0.0}) {
      for (const auto* r : runs) {
        if (!is_work_state(r->state) || r->end - r->start < min_s) continue;
        if (!span.work_start) span.work_start = r->start;
        span.work_end = r->end;
      }
      if (span.work_start) break;  // only short work: the short runs are the work
    }
    for (const auto* r : runs) {
      const double secs = std::max(0.0, r->end - r->start);
      out.total_s += secs;
      out.all.add(r->state, secs);
      // A GPU that never worked has no start-up: all of its idle time is the job's.
      if (!edges_apart) {
        out.steady.add(r->state, secs);
      } else if (span.work_start && r->end <= *span.work_start + 1e-9) {
        span.startup_s += secs;
      } else if (span.work_end && r->start >= *span.work_end - 1e-9) {
        span.teardown_s += secs;
      } else {
        out.steady.add(r->state, secs);
      }
    }
    out.startup_s += span.startup_s;
    out.teardown_s += span.teardown_s;
    if (span.work_start) {
      out.start = std::min(out.start.value_or(*span.work_start), *span.work_start);
      out.end = std::max(out.end.value_or(*span.work_end), *span.work_end);
    }
    out.gpus.push_back(span);
  }
  return out;
}

}  // namespace gpulens::verdict
