// SPDX-License-Identifier: Apache-2.0
#include "cli/live_diagnosis.hpp"

#include "diagnosis/config.hpp"
#include "diagnosis/engine.hpp"

namespace gpulens::cli {

struct LiveDiagnosis::Impl {
  explicit Impl(const TraceHeader& header) : engine(header, diagnosis::DiagnosisConfig{}) {}
  diagnosis::DiagnosisEngine engine;
};

LiveDiagnosis::LiveDiagnosis(const TraceHeader& header, bool enabled) {
  if (enabled) impl_ = std::make_unique<Impl>(header);
}

LiveDiagnosis::~LiveDiagnosis() = default;

void LiveDiagnosis::on_tick(const Tick& tick) {
  if (impl_) impl_->engine.on_tick(tick);
}

const diagnosis::DiagnosisEngine* LiveDiagnosis::engine() const {
  return impl_ ? &impl_->engine : nullptr;
}

std::optional<render::StreamAnnotation> LiveDiagnosis::annotation(int gpu) const {
  if (!impl_) return std::nullopt;
  const diagnosis::GpuBrief brief = impl_->engine.brief(gpu);
  render::StreamAnnotation note;
  note.state = brief.state;
  if (brief.throttled) note.state += "+thr";
  note.alerts = brief.alerts;
  return note;
}

}  // namespace gpulens::cli
