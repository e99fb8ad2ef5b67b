// SPDX-License-Identifier: Apache-2.0
#include "agent/log.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <mutex>

#include "core/text_safety.hpp"

namespace gpulens::agent {
namespace {

std::atomic<LogLevel> g_level{LogLevel::Info};
std::mutex g_log_mutex;

bool under_journal() {
  static const bool journal = std::getenv("JOURNAL_STREAM") != nullptr;
  return journal;
}

}  // namespace

void set_log_level(LogLevel level) {
  g_level = level;
}

void log_line(LogLevel level, std::string_view raw) {
  if (level < g_level.load()) return;
  // Messages quote request paths, config files and process names: one line each,
  // with no control that could forge a log line or drive the terminal tailing it.
  const std::string message = terminal_safe(raw);
  static constexpr const char* kNames[] = {"debug", "info", "warning", "error"};
  static constexpr int kSyslog[] = {7, 6, 4, 3};
  const auto i = static_cast<std::size_t>(level);
  std::string line;
  if (under_journal()) {
    line = fmt::format("<{}>{}\n", kSyslog[i], message);
  } else {
    const auto now = std::chrono::system_clock::now();
    const std::time_t secs = std::chrono::system_clock::to_time_t(now);
    std::tm tm{};
    gmtime_r(&secs, &tm);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &tm);
    line = fmt::format("{} {:<7} {}\n", stamp, kNames[i], message);
  }
  std::lock_guard lock(g_log_mutex);
  std::fputs(line.c_str(), stderr);
  std::fflush(stderr);
}

}  // namespace gpulens::agent
