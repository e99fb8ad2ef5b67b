// SPDX-License-Identifier: Apache-2.0
#pragma once
// Where the report's data tables (gpu_peaks.json, prices.json) come from. Each
// file is looked up on its own, first match wins: --data-dir, $GPULENS_DATA_DIR,
// /etc/gpulens, and else the copy compiled into the binary from data/ at build
// time (data/embed.cmake). An installed or copied binary therefore always has
// MFU and prices; a file in one of the directories overrides the built-in table.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpulens::verdict {

inline constexpr const char* kSystemDataDir = "/etc/gpulens";

// The directories searched, highest precedence first; empty arguments are left out.
std::vector<std::string> data_search_dirs(const std::string& cli_dir, const char* env_dir,
                                          const std::string& system_dir = kSystemDataDir);
// The same, from --data-dir and the environment.
std::vector<std::string> data_search_dirs(const std::string& cli_dir);

// The first `dir/file_name` that is a regular file; nullopt when none is.
std::optional<std::string> find_data_file(const std::string& file_name,
                                          const std::vector<std::string>& dirs);

// The build's copy of data/<name>; nullopt for a name that is not compiled in.
// Defined in the generated data_files_data.cpp.
std::optional<std::string_view> builtin_data_file(std::string_view name);

// How the report names the built-in copy of a table, e.g. "data/prices.json".
std::string builtin_data_origin(const std::string& file_name);

}  // namespace gpulens::verdict
