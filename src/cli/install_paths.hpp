// SPDX-License-Identifier: Apache-2.0
#pragma once
// Where an installed gpulens keeps its files (cmake/install.cmake), for the texts
// that point users at them.
#include <string>

namespace gpulens::cli {

// The example recording that the install ships: share/gpulens/examples of the
// prefix the running binary sits in (an install, a package, the container image)
// when it is there, else that of the configured install prefix.
std::string example_recording();

}  // namespace gpulens::cli
