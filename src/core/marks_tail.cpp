// SPDX-License-Identifier: Apache-2.0
#include "core/marks_tail.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>

#include "core/input_limits.hpp"
#include "core/regular_file.hpp"
#include "core/trace_reader.hpp"

namespace gpulens {

std::optional<Mark> parse_mark_line(const std::string& line, double now_s) {
  const auto parsed = parse_json_bounded(line);
  if (!parsed || !parsed->is_object()) return std::nullopt;
  const nlohmann::json& j = *parsed;
  const auto name = j.find("mark");
  if (name == j.end() || !name->is_string()) return std::nullopt;
  Mark mark = mark_from_json(j);
  if (!j.contains("t") || !j["t"].is_number()) mark.t = now_s;
  return mark;
}

std::vector<Mark> MarksTail::poll(double now_s) {
  std::vector<Mark> marks;
  if (!refused_.empty() || truncated_) return marks;
  bool missing = false;
  const auto fd = open_regular_file(path_, &missing);
  if (!fd) {
    // Not created yet, or gone for a moment: the workload may write it later.
    // Anything else standing there is refused for good.
    if (!missing) refused_ = fd.error().message;
    return marks;
  }
  std::array<char, 64 * 1024> buf{};
  if (::lseek(*fd, offset_, SEEK_SET) == offset_) {
    while (true) {
      const auto left = static_cast<long long>(max_bytes_) - offset_;
      if (left <= 0) {
        // At the limit: one byte more says whether anything was left unread.
        char probe = 0;
        truncated_ = ::read(*fd, &probe, 1) > 0;
        break;
      }
      const auto want = static_cast<std::size_t>(std::min<long long>(left, buf.size()));
      const ssize_t n = ::read(*fd, buf.data(), want);
      if (n <= 0) break;
      offset_ += n;
      take(std::string_view(buf.data(), static_cast<std::size_t>(n)), now_s, marks);
    }
  }
  ::close(*fd);
  return marks;
}

void MarksTail::take(std::string_view chunk, double now_s, std::vector<Mark>& marks) {
  while (!chunk.empty()) {
    const std::size_t nl = chunk.find('\n');
    const std::string_view piece = chunk.substr(0, nl);
    chunk = nl == std::string_view::npos ? std::string_view{} : chunk.substr(nl + 1);
    // A line whole inside the chunk is judged where it lies; only a line split
    // across reads is put together in partial_.
    std::string_view line = piece;
    if (!partial_.empty() || discarding_ || nl == std::string_view::npos) {
      if (!discarding_) partial_.append(piece);
      if (partial_.size() > kMaxLineBytes) {
        // A line past the limit is dropped as it arrives: memory stays bounded.
        partial_.clear();
        discarding_ = true;
        ++bad_lines_;
      }
      if (nl == std::string_view::npos) return;
      line = partial_;
    } else if (line.size() > kMaxLineBytes) {
      ++bad_lines_;
      continue;
    }
    const auto first = line.find_first_not_of(" \t\r");
    if (!discarding_ && first != std::string_view::npos) {
      // A mark is a JSON object: anything else is counted without parsing, so a
      // flood of short garbage lines costs a byte compare each.
      auto mark = line[first] == '{' ? parse_mark_line(std::string(line), now_s) : std::nullopt;
      if (mark) {
        marks.push_back(std::move(*mark));
      } else {
        ++bad_lines_;
      }
    }
    partial_.clear();
    discarding_ = false;
  }
}

}  // namespace gpulens
