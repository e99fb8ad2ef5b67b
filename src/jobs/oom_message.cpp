// SPDX-License-Identifier: Apache-2.0
#include "jobs/oom_message.hpp"

#include <array>
#include <cctype>
#include <cmath>
#include <cstdlib>

namespace gpulens::jobs {
namespace {

struct Pattern {
  std::string_view words;  // found anywhere in the line, as written
  std::string_view source;
};

// Most specific first: the first that matches names the source. Java's
// "java.lang.OutOfMemoryError" is the host's heap, so OutOfMemoryError alone
// is not one of them.
constexpr std::array kPatterns = {
    Pattern{"torch.OutOfMemoryError", "pytorch"},
    Pattern{"torch.cuda.OutOfMemoryError", "pytorch"},
    Pattern{"cupy.cuda.memory.OutOfMemoryError", "cupy"},
    Pattern{"CUDA out of memory", "pytorch"},  // its caching allocator's words
    Pattern{"CUDA error: out of memory", "cuda"},
    Pattern{"cudaErrorMemoryAllocation", "cuda"},
    Pattern{"CUDA_ERROR_OUT_OF_MEMORY", "cuda"},
    Pattern{"CUBLAS_STATUS_ALLOC_FAILED", "cuda"},
    Pattern{"CUDNN_STATUS_ALLOC_FAILED", "cuda"},
    Pattern{"CUSOLVER_STATUS_ALLOC_FAILED", "cuda"},
    Pattern{"CUFFT_ALLOC_FAILED", "cuda"},
    Pattern{"RESOURCE_EXHAUSTED: Out of memory", "jax"},
    Pattern{"ResourceExhaustedError", "tensorflow"},
    Pattern{"OOM when allocating tensor", "tensorflow"},
};

// MiB in one of the units the frameworks print: PyTorch "4.00 GiB", "20.00 MiB",
// "512 bytes"; XLA "17179869184 bytes"; CuPy "4,294,967,296 bytes".
std::optional<double> unit_mib(std::string_view unit) {
  struct U {
    std::string_view name;
    double mib;
  };
  static constexpr std::array kUnits = {U{"bytes", 1.0 / 1048576},
                                        U{"KiB", 1.0 / 1024},
                                        U{"MiB", 1},
                                        U{"GiB", 1024},
                                        U{"TiB", 1048576},
                                        U{"KB", 1e3 / 1048576},
                                        U{"MB", 1e6 / 1048576},
                                        U{"GB", 1e9 / 1048576},
                                        U{"TB", 1e12 / 1048576},
                                        U{"B", 1.0 / 1048576}};
  for (const auto& u : kUnits) {
    if (unit.starts_with(u.name)) {
      // A whole word: "B" of "Bytes of" is not bytes; "GiB." and "GiB;" are.
      const std::string_view rest = unit.substr(u.name.size());
      if (rest.empty() || std::isalpha(static_cast<unsigned char>(rest.front())) == 0) {
        return u.mib;
      }
    }
  }
  return std::nullopt;
}

// A size starting at `at` ("4.00 GiB", "4,294,967,296 bytes", "4.00GiB").
std::optional<double> size_at(std::string_view line, std::size_t at) {
  std::size_t i = at;
  std::string digits;
  while (i < line.size() && digits.size() < 32 &&
         (std::isdigit(static_cast<unsigned char>(line[i])) != 0 || line[i] == '.' ||
          line[i] == ',')) {
    if (line[i] != ',') digits += line[i];
    ++i;
  }
  if (digits.empty() || std::isdigit(static_cast<unsigned char>(digits.front())) == 0) {
    return std::nullopt;
  }
  if (i < line.size() && line[i] == ' ') ++i;
  const auto unit = unit_mib(line.substr(i));
  if (!unit) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(digits.c_str(), &end);
  if (end == digits.c_str() || !std::isfinite(v) || v < 0) return std::nullopt;
  return v * *unit;
}

// The size right after `words` ("Tried to allocate " 4.00 GiB).
std::optional<double> size_after(std::string_view line, std::string_view words) {
  const auto at = line.find(words);
  if (at == std::string_view::npos) return std::nullopt;
  return size_at(line, at + words.size());
}

// The size right before `words` (3.06 MiB " free"): back over the unit and the number.
std::optional<double> size_before(std::string_view line, std::string_view words) {
  const auto at = line.find(words);
  if (at == std::string_view::npos || at == 0) return std::nullopt;
  std::size_t i = at;
  while (i > 0 && std::isalpha(static_cast<unsigned char>(line[i - 1])) != 0) --i;  // the unit
  if (i > 0 && line[i - 1] == ' ') --i;
  const std::size_t number_end = i;
  while (i > 0 && (std::isdigit(static_cast<unsigned char>(line[i - 1])) != 0 ||
                   line[i - 1] == '.' || line[i - 1] == ',')) {
    --i;
  }
  if (i == number_end) return std::nullopt;
  return size_at(line, i);
}

template <typename... Ts>
std::optional<double> first_of(Ts... candidates) {
  std::optional<double> out;
  ((out = out ? out : candidates), ...);
  return out;
}

}  // namespace

std::optional<StderrScan> recognise_oom_line(std::string_view line) {
  const Pattern* hit = nullptr;
  for (const auto& p : kPatterns) {
    if (line.find(p.words) != std::string_view::npos) {
      hit = &p;
      break;
    }
  }
  if (hit == nullptr) return std::nullopt;
  // The words from where the message starts, and a line of an unreadable
  // length cut: what is shown is the job's own, but bounded and terminal-safe.
  while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
  while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back())) != 0) {
    line.remove_suffix(1);
  }
  StderrScan s;
  s.oom_source = std::string(hit->source);
  s.oom_message = oom_message_text(line);
  s.oom_tried_mib =
      first_of(size_after(line, "Tried to allocate "), size_after(line, "trying to allocate "),
               size_after(line, "Out of memory allocating "));
  // PyTorch 2.x: "of which 3.19 GiB is free"; 1.x: "; 3.06 MiB free;".
  s.oom_free_mib = first_of(size_after(line, "of which "), size_before(line, " free;"),
                            size_before(line, " free)"));
  s.oom_capacity_mib =
      first_of(size_after(line, "total capacity of "), size_before(line, " total capacity"));
  return s;
}

bool OomScanner::better(const StderrScan& now, const StderrScan& candidate) {
  const bool now_figures = now.oom_tried_mib || now.oom_free_mib;
  const bool candidate_figures = candidate.oom_tried_mib || candidate.oom_free_mib;
  return !now_figures && candidate_figures;
}

void OomScanner::line_done_locked() {
  if (!line_.empty()) {
    if (auto s = recognise_oom_line(line_); s && (!found_ || better(*found_, *s))) {
      found_ = std::move(s);
    }
  }
  line_.clear();
  line_cut_ = false;
}

void OomScanner::feed(std::string_view bytes) {
  std::lock_guard lock(mutex_);
  while (!bytes.empty()) {
    // '\r' ends a line too: a progress bar redraws its line with it.
    const auto end = bytes.find_first_of("\n\r");
    const std::string_view part = bytes.substr(0, end);
    if (!line_cut_) {
      const std::size_t room = kMaxScanLine - line_.size();
      line_.append(part.substr(0, room));
      line_cut_ = part.size() > room;
    }
    if (end == std::string_view::npos) break;
    line_done_locked();
    bytes.remove_prefix(end + 1);
  }
}

StderrScan OomScanner::found() const {
  std::lock_guard lock(mutex_);
  std::optional<StderrScan> out = found_;
  if (!line_.empty()) {
    if (auto s = recognise_oom_line(line_); s && (!out || better(*out, *s))) out = std::move(s);
  }
  return out.value_or(StderrScan{});
}

}  // namespace gpulens::jobs
