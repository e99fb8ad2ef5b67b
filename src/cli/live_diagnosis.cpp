#include "cli/live_diagnosis.hpp"

namespace gpulens::cli {

// Filled in once the diagnosis engine lands; until then streams show no state.
struct LiveDiagnosis::Impl {};

LiveDiagnosis::LiveDiagnosis(const TraceHeader&, bool) {}
LiveDiagnosis::~LiveDiagnosis() = default;
void LiveDiagnosis::on_tick(const Tick&) {}
std::optional<StreamAnnotation> LiveDiagnosis::annotation(int) const {
  return std::nullopt;
}

}  // namespace gpulens::cli
