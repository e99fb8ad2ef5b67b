// SPDX-License-Identifier: Apache-2.0
#pragma once
// Reads a launch-count record (launch_record.hpp) back from its JSON line. The job
// wrote it and may have written anything: every field is checked, and a record at
// fault is refused whole with the first field at fault named.
#include <nlohmann/json.hpp>
#include <string>
#include <variant>

#include "kernels/record/launch_record.hpp"

namespace gpulens::kernels {

// The record, or why it is refused ("field `kernels[3].launches` is negative").
std::variant<LaunchRecord, std::string> read_launch_record(const nlohmann::json& line);

}  // namespace gpulens::kernels
