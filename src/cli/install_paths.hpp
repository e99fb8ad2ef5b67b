// SPDX-License-Identifier: Apache-2.0
#pragma once
// Where an installed gpulens keeps its files (cmake/install.cmake), for the texts
// that point users at them. Worked out from where the running binary is, never
// from a prefix baked in at build time: a package installs under /usr whatever
// prefix the build was configured with, and a prefix moved as a whole (dpkg -x,
// DESTDIR, the container image) still finds its own files.
#include <filesystem>
#include <string>

namespace gpulens::cli {

// The example recording that the install ships, for the running binary
// (/proc/self/exe): see example_recording_for.
std::string example_recording();

// The example recording for a gpulens binary at `exe`:
//  - installed: <exe's dir>/../share/gpulens/examples/calibration-h100.trace.jsonl;
//  - in a build tree (a CMakeCache.txt beside the binary): the source tree's
//    examples/calibration-h100.trace.jsonl, where the build came from;
//  - else the installed path, where an install would have it.
std::string example_recording_for(const std::filesystem::path& exe);

// A library of gpulens' own (libgpulens_kernels.so, libgpulens_launches.so) for a
// gpulens binary in `exe_dir`: beside it in a build tree, in ../lib/gpulens once
// installed (so that bin/ holds only programs); empty when neither has it.
std::string private_library_for(const std::string& exe_dir, const std::string& name);

// The same for the running binary, unless the environment variable `override_var`
// names a file: then that file, or empty when it names none.
std::string private_library(const char* override_var, const std::string& name);

}  // namespace gpulens::cli
