// SPDX-License-Identifier: Apache-2.0
#include "cli/unknown_command.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <vector>

namespace gpulens::cli {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::optional<std::string> unknown_command(const CLI::App& app, std::string_view name) {
  std::vector<std::string> visible;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (sub->get_name() == name) return std::nullopt;
    if (!sub->get_group().empty()) visible.push_back(sub->get_name());  // hidden: no group
  }
  // The nearest visible command within a third of the name's length, or one
  // that starts with what was typed ("diag" -> diagnose).
  std::string best;
  std::size_t best_distance = name.size() / 3 + 1;
  for (const auto& command : visible) {
    const std::size_t d = command.starts_with(name) ? 0 : edit_distance(name, command);
    if (d < best_distance) best = command, best_distance = d;
  }
  std::string text = fmt::format("gpulens: '{}' is not a gpulens command.\n", name);
  if (!best.empty()) text += fmt::format("  Did you mean 'gpulens {}'?\n", best);
  text += "  Run 'gpulens --help' for the list of commands.\n";
  return text;
}

}  // namespace gpulens::cli
