// SPDX-License-Identifier: Apache-2.0
#pragma once
// Bridges the diagnosis engine into live views (stream): per-GPU state and alerts.
// The engine is the same one diagnose, run and serve use, so they all agree.
#include <memory>
#include <optional>

#include "core/sample.hpp"
#include "render/stream_format.hpp"

namespace gpulens::diagnosis {
class DiagnosisEngine;
}

namespace gpulens::cli {

class LiveDiagnosis {
 public:
  LiveDiagnosis(const TraceHeader& header, bool enabled);
  ~LiveDiagnosis();
  void on_tick(const Tick& tick);
  std::optional<render::StreamAnnotation> annotation(int gpu) const;
  // The engine itself, for views that show more than the annotation (top);
  // nullptr when diagnosis is off.
  const diagnosis::DiagnosisEngine* engine() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpulens::cli
