// SPDX-License-Identifier: Apache-2.0
#include "tui/cell_text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "core/text_units.hpp"

namespace gpulens::tui {

std::string pct_text(std::optional<double> v, bool unsupported) {
  if (!v) return unsupported ? "n/a" : "-";
  return points_compact(*v);
}

std::string num(std::optional<double> v, const char* spec) {
  return v ? fmt::format(fmt::runtime(spec), *v) : "-";
}

std::string rates(std::optional<double> rx, std::optional<double> tx, bool utf8) {
  const bool gib = std::max(rx.value_or(0), tx.value_or(0)) >= 10240;
  auto one = [gib](std::optional<double> v) {
    if (!v) return std::string("-");
    return gib ? fmt::format("{:.1f}", *v / 1024) : fmt::format("{:.0f}", *v);
  };
  return std::string(utf8 ? "\u2193" : "rx ") + one(rx) + (utf8 ? " \u2191" : " tx ") + one(tx) +
         (gib ? " GiB/s" : " MiB/s");
}

std::string gib(std::optional<double> mib) {
  if (!mib) return "-";
  return fmt::format("{:.1f}", *mib / 1024);
}

std::string mib_short(std::optional<double> mib) {
  if (!mib) return "-";
  if (*mib >= 10240) return fmt::format("{:.1f}G", *mib / 1024);
  return fmt::format("{:.0f}M", *mib);
}

std::string short_name(const std::string& name) {
  std::string s = name;
  for (const char* prefix : {"NVIDIA ", "Tesla "}) {
    if (s.rfind(prefix, 0) == 0) s = s.substr(std::strlen(prefix));
  }
  const auto space = s.find(' ');
  return space == std::string::npos ? s : s.substr(0, space);
}

Style state_style(const GpuView& g) {
  if (g.critical) return Style::Bad;
  const auto state = diagnosis::state_from_id(g.state);
  if (!state) return Style::Dim;
  return state_style_of(*state);
}

std::string state_label(const GpuView& g) {
  if (g.state.empty()) return "";
  std::string s = g.state;
  if (g.throttled) s += "+thr";
  if (!g.alerts.empty()) s += " !";
  return s;
}

}  // namespace gpulens::tui
