// SPDX-License-Identifier: Apache-2.0
#include "cli/kernels_setup.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ext/stdio_filebuf.h>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/install_paths.hpp"
#include "cli/records_dir.hpp"
#include "core/input_limits.hpp"
#include "core/regular_file.hpp"
#include "inject/schedule.hpp"

namespace gpulens::cli {
namespace {

namespace fs = std::filesystem;

// A libcupti from the toolkit, for jobs whose own CUDA stack brings none (the
// injection library prefers the job's copy when there is one).
std::string find_toolkit_cupti() {
  std::vector<std::string> roots;
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
    if (const char* v = std::getenv(var); v != nullptr && *v != '\0') roots.emplace_back(v);
  }
  roots.emplace_back("/usr/local/cuda");
  for (const auto& r : roots) {
    for (const char* rel : {"/lib64/libcupti.so", "/extras/CUPTI/lib64/libcupti.so",
                            "/targets/x86_64-linux/lib/libcupti.so"}) {
      std::error_code ec;
      if (fs::exists(r + rel, ec)) return r + rel;
    }
  }
  return {};
}

}  // namespace

std::string find_kernels_library(const std::string& exe_dir) {
  return private_library_for(exe_dir, "libgpulens_kernels.so");
}

KernelsSetup prepare_kernels(const std::string& run_dir,
                             const std::optional<KernelsWindows>& windows) {
  KernelsSetup s;
  const std::string lib = private_library("GPULENS_KERNELS_LIB", "libgpulens_kernels.so");
  if (lib.empty()) {
    s.status = "not_built";
    s.unavailable =
        "this gpulens was built without the CUPTI injection library (libgpulens_kernels.so: "
        "no CUPTI headers at build time)";
    return s;
  }
  // Loaded here first, so that a library this system cannot load (a glibc older
  // than it needs, docs/kernels.md) is said here and never reaches the job, whose
  // CUDA start and stderr it would otherwise disturb.
  if (void* h = dlopen(lib.c_str(), RTLD_LAZY | RTLD_LOCAL); h != nullptr) {
    dlclose(h);
  } else {
    const char* why = dlerror();
    s.status = "not_loadable";
    s.unavailable = "the CUPTI injection library cannot be loaded on this system (" +
                    std::string(why != nullptr ? why : lib) + ")";
    return s;
  }
  if (const char* other = std::getenv("CUDA_INJECTION64_PATH");
      other != nullptr && *other != '\0') {
    s.status = "injection_taken";
    s.unavailable = std::string("another tool holds CUDA_INJECTION64_PATH (") + other + ")";
    return s;
  }
  s.records_dir = run_dir + "/kernels";
  std::string why;
  s.records_dir_fd = make_records_dir(s.records_dir, why);
  if (!s.records_dir_fd) {
    s.status = "unreadable";
    s.unavailable =
        fmt::format("cannot make the kernel records directory {}: {}", s.records_dir, why);
    return s;
  }
  std::string preload = lib;
  if (const char* p = std::getenv("LD_PRELOAD"); p != nullptr && *p != '\0') {
    preload += std::string(":") + p;
  }
  s.env = {{"CUDA_INJECTION64_PATH", lib},
           {"LD_PRELOAD", preload},
           {"GPULENS_KERNELS_DIR", s.records_dir}};
  // NVTX ranges reach a tool only through this variable, read at the job's first
  // NVTX call: the library passes it on to its libcupti (src/inject/entry_points.cpp). A
  // tool that already holds it (Nsight) keeps it; each record then says so.
  if (const char* nvtx = std::getenv("NVTX_INJECTION64_PATH"); nvtx == nullptr || *nvtx == '\0') {
    s.env.emplace_back("NVTX_INJECTION64_PATH", lib);
  }
  if (windows) {
    // On the job's clock, which starts now, and spread from its first CUDA start
    // (inject/schedule.hpp): every process traces the same windows.
    const inject::TraceSchedule schedule =
        inject::spread_schedule(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                    std::chrono::system_clock::now().time_since_epoch())
                                    .count(),
                                windows->window_s, windows->every_s);
    s.env.emplace_back("GPULENS_KERNELS_SCHEDULE", inject::format_schedule(schedule));
  }
  if (auto cupti = find_toolkit_cupti(); !cupti.empty()) {
    s.env.emplace_back("GPULENS_TOOLKIT_CUPTI", cupti);
  }
  return s;
}

namespace {

// The lines of one record file, each checked to be a kernel record, appended to
// `out`; a file or line that is not one becomes a record saying so. The job wrote
// these files, and may have put anything there: a FIFO (opening it would wait for
// a writer forever), a link to /dev/zero, lines of gigabytes. Files are opened as
// regular files only, and read in bounded lines.
struct RecordCopier {
  std::ofstream& out;
  std::size_t budget;       // bytes left to read, over all files
  std::size_t max_records;  // records taken in all, at most
  const std::size_t limit = budget;
  std::size_t records = 0;

  std::string limit_text() const {
    return fmt::format("the job's record files are read up to {} and {} records in all",
                       limit % (1 << 20) == 0 ? fmt::format("{} MiB", limit >> 20)
                                              : fmt::format("{} bytes", limit),
                       max_records);
  }

  void write(const std::string& line) {
    out << line << '\n';
    ++records;
  }
  void unreadable(const fs::path& f, const std::string& why) {
    write(nlohmann::json{
        {"x_kernels", 3}, {"status", "unreadable"}, {"reason", f.filename().string() + ": " + why}}
              .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  }

  // `name` in the records directory `dir_fd`; a link there is refused, not followed.
  void copy(int dir_fd, const fs::path& f) {
    auto fd = open_regular_file_at(dir_fd, f.filename().string());
    if (!fd) {
      unreadable(f, fd.error().message);
      return;
    }
    __gnu_cxx::stdio_filebuf<char> buf(*fd, std::ios::in);
    std::istream in(&buf);
    std::string line;
    std::size_t number = 0, refused = 0;
    std::string first_problem;
    std::string stopped;  // why the rest of the file was not read
    for (;;) {
      if (budget == 0) {
        // Said only when something is left: the budget may end with the file.
        if (in.peek() != std::char_traits<char>::eof()) {
          stopped = fmt::format("not read past line {}: {}", number, limit_text());
        }
        break;
      }
      if (refused >= kMaxRefusedRecordLines) {
        stopped = fmt::format("not read past line {}: {} lines were not records", number, refused);
        break;
      }
      const LineRead r = read_line_bounded(in, line, std::min(kMaxLineBytes, budget));
      if (r == LineRead::End) break;
      ++number;
      budget -= std::min(budget, line.size() + 1);
      std::string problem;
      if (r == LineRead::TooLong && budget == 0) {
        continue;  // the budget ended inside it: said above, not as a long line
      } else if (r == LineRead::TooLong) {
        // The rest of it too (its tail is no record of its own), counted in the budget.
        in.ignore(static_cast<std::streamsize>(std::min<std::size_t>(budget, PTRDIFF_MAX)), '\n');
        budget -= std::min(budget, static_cast<std::size_t>(in.gcount()));
        problem = fmt::format("longer than {} bytes (line {})", kMaxLineBytes, number);
      } else if (line.empty()) {
        continue;
      } else if (auto j = parse_json_bounded(line); !j) {
        // A process killed inside its last write leaves half a line: said, not fatal.
        problem = fmt::format("{} (line {})", j.error().message, number);
      } else if (!j->is_object() || !j->contains("x_kernels")) {
        problem =
            fmt::format("not a kernel record (a JSON object with \"x_kernels\") (line {})", number);
      } else {
        write(line);
        if (records >= max_records) budget = 0;  // as spent: said alike
        continue;
      }
      if (refused++ == 0) first_problem = problem;
    }
    if (refused > 0) {
      unreadable(f, refused == 1
                        ? first_problem
                        : fmt::format("{} lines refused; the first: {}", refused, first_problem));
    }
    if (!stopped.empty()) unreadable(f, stopped);
  }
};

}  // namespace

std::string merge_kernel_records(const KernelsSetup& setup, const std::string& trace_path,
                                 std::size_t max_bytes, std::size_t max_records) {
  std::ofstream out(trace_path, std::ios::app);
  RecordCopier copier{out, max_bytes, max_records};
  if (!setup.unavailable.empty()) {
    copier.write(
        nlohmann::json{{"x_kernels", 3}, {"status", setup.status}, {"reason", setup.unavailable}}
            .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  } else {
    const int dir_fd = setup.records_dir_fd ? *setup.records_dir_fd : -1;
    const std::vector<fs::path> files = list_records(dir_fd, {".jsonl", ".json"});
    bool skipping = false;  // the rest of the files are not read, said once
    for (std::size_t i = 0; i < files.size(); ++i) {
      const fs::path& f = files[i];
      if (skipping) {
        // said with the first file left unread
      } else if (i == kMaxKernelRecordFiles || copier.budget == 0) {
        copier.unreadable(
            f, copier.budget == 0
                   ? fmt::format("this and {} more record files not read ({})",
                                 files.size() - i - 1, copier.limit_text())
                   : fmt::format("this and {} more record files not read (at most {} are)",
                                 files.size() - i - 1, kMaxKernelRecordFiles));
        skipping = true;
      } else {
        copier.copy(dir_fd, f);
      }
      // unlinkat never follows a link: a planted one goes, not what it names.
      ::unlinkat(dir_fd, f.filename().c_str(), 0);
    }
    // The job's first CUDA start, which its processes shared (inject/schedule.hpp).
    if (dir_fd >= 0) ::unlinkat(dir_fd, inject::kOriginFile, 0);
    remove_records_dir(setup.records_dir, dir_fd);
    if (copier.records == 0) {
      copier.write(
          nlohmann::json{{"x_kernels", 3},
                         {"status", "no_cuda"},
                         {"reason",
                          "no process of the job started CUDA (or each one ended without running "
                          "its exit handlers, e.g. os._exit or a signal)"}}
              .dump());
    }
  }
  out.flush();
  if (!out) return "cannot add the kernel records to " + trace_path;
  return {};
}

}  // namespace gpulens::cli
