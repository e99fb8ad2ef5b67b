// SPDX-License-Identifier: Apache-2.0
#pragma once
// `gpulens frobnicate`: the message for a command that does not exist, with the
// nearest real one (git's "did you mean"), or nullopt when the name is a command.
#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace gpulens::cli {

// Edit distance (insertions, deletions, substitutions) between two short words.
std::size_t edit_distance(std::string_view a, std::string_view b);

std::optional<std::string> unknown_command(const CLI::App& app, std::string_view name);

}  // namespace gpulens::cli
