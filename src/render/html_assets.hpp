// SPDX-License-Identifier: Apache-2.0
#pragma once
// The HTML report's inline style sheet and script.
#include <string_view>

namespace gpulens::render::html {

std::string_view report_css();
std::string_view report_js();

}  // namespace gpulens::render::html
