// SPDX-License-Identifier: Apache-2.0
#pragma once
// What gpulens reads on each NVIDIA generation and what it cannot tell there, for
// `gpulens --help` (issue 44). docs/generations.md says the same at length; the
// two are kept together by tests/unit/cli/generations_test.cpp.
#include <string>

namespace gpulens::cli {

std::string generation_limits_help();

}  // namespace gpulens::cli
