// SPDX-License-Identifier: Apache-2.0
#pragma once
// The printed forms of a recording's diagnosis (`gpulens diagnose`): the stable
// JSON form (docs/diagnosis.md) and a readable text form.
#include <nlohmann/json.hpp>
#include <string>

#include "diagnosis/timeline.hpp"

namespace gpulens::render {

nlohmann::ordered_json report_to_json(const diagnosis::DiagnosisReport& report);
std::string report_to_text(const diagnosis::DiagnosisReport& report);

}  // namespace gpulens::render
