// SPDX-License-Identifier: Apache-2.0
#pragma once
// The agent's log: one line per event on stderr. Under systemd (JOURNAL_STREAM
// set) lines carry a syslog priority prefix and no timestamp, since the journal
// adds both; elsewhere they carry an ISO-8601 UTC timestamp and the level.
#include <fmt/format.h>

#include <string_view>

namespace gpulens::agent {

enum class LogLevel { Debug, Info, Warning, Error };

void set_log_level(LogLevel level);
void log_line(LogLevel level, std::string_view message);

template <typename... Args>
void log_info(fmt::format_string<Args...> format, Args&&... args) {
  log_line(LogLevel::Info, fmt::format(format, std::forward<Args>(args)...));
}
template <typename... Args>
void log_warning(fmt::format_string<Args...> format, Args&&... args) {
  log_line(LogLevel::Warning, fmt::format(format, std::forward<Args>(args)...));
}
template <typename... Args>
void log_error(fmt::format_string<Args...> format, Args&&... args) {
  log_line(LogLevel::Error, fmt::format(format, std::forward<Args>(args)...));
}
template <typename... Args>
void log_debug(fmt::format_string<Args...> format, Args&&... args) {
  log_line(LogLevel::Debug, fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace gpulens::agent
