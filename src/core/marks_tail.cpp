// SPDX-License-Identifier: Apache-2.0
#include "core/marks_tail.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <array>

#include "core/input_limits.hpp"
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
  const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return marks;  // not created yet: the workload may write it later
  std::array<char, 8192> buf{};
  if (::lseek(fd, offset_, SEEK_SET) == offset_) {
    while (true) {
      const ssize_t n = ::read(fd, buf.data(), buf.size());
      if (n <= 0) break;
      offset_ += n;
      take(std::string_view(buf.data(), static_cast<std::size_t>(n)), now_s, marks);
    }
  }
  ::close(fd);
  return marks;
}

void MarksTail::take(std::string_view chunk, double now_s, std::vector<Mark>& marks) {
  while (!chunk.empty()) {
    const std::size_t nl = chunk.find('\n');
    const std::string_view piece = chunk.substr(0, nl);
    chunk = nl == std::string_view::npos ? std::string_view{} : chunk.substr(nl + 1);
    if (!discarding_) partial_.append(piece);
    if (partial_.size() > kMaxLineBytes) {
      // A line past the limit is dropped as it arrives: memory stays bounded.
      partial_.clear();
      discarding_ = true;
      ++bad_lines_;
    }
    if (nl == std::string_view::npos) return;
    if (!discarding_ && partial_.find_first_not_of(" \t\r") != std::string::npos) {
      if (auto mark = parse_mark_line(partial_, now_s)) {
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
