// SPDX-License-Identifier: Apache-2.0
#pragma once
// The line `gpulens record` keeps up to date on a terminal during a long
// recording (issue 48: it was silent until the end). Only on a terminal: a log
// or a pipe gets the start and end lines alone.
#include <cstddef>
#include <cstdint>
#include <string>

namespace gpulens::cli {

// "recording: 1,234 samples, 2 GPUs, 1.2 MiB, 1 min 3 s" (no control characters).
std::string record_progress_line(std::size_t samples, std::size_t gpus, std::uintmax_t bytes,
                                 double elapsed_s);

// Rewrites the line in place on stderr: "\r", the line, erase to the end of the line.
void show_progress_line(const std::string& line);
// Erases it, so that the next message starts on a clean line.
void clear_progress_line();

}  // namespace gpulens::cli
