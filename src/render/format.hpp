// SPDX-License-Identifier: Apache-2.0
#pragma once
// Number formatting shared by the text, JSON and HTML forms of a verdict, so
// the three say the same figures the same way.
#include <string>

namespace gpulens::render {

// "$1,234", "$12.35", "$0.064": whole units from 100 up, cents above 1, three
// significant digits below.
std::string format_money(double amount, const std::string& currency);
// GPU-hours with enough digits to show a short job: "12.4", "0.216", "0.00216".
std::string format_gpu_hours(double hours);
// "1,234,567" grouping for large counts.
std::string group_thousands(long long value);

}  // namespace gpulens::render
