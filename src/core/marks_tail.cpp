#include "core/marks_tail.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <array>

#include "core/trace_reader.hpp"

namespace gpulens {

std::optional<Mark> parse_mark_line(const std::string& line, double now_s) {
  const auto j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
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
      partial_.append(buf.data(), static_cast<std::size_t>(n));
    }
  }
  ::close(fd);
  std::size_t start = 0;
  for (std::size_t nl; (nl = partial_.find('\n', start)) != std::string::npos; start = nl + 1) {
    const std::string line = partial_.substr(start, nl - start);
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (auto mark = parse_mark_line(line, now_s)) {
      marks.push_back(std::move(*mark));
    } else {
      ++bad_lines_;
    }
  }
  partial_.erase(0, start);
  return marks;
}

}  // namespace gpulens
