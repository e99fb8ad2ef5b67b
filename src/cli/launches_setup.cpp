// SPDX-License-Identifier: Apache-2.0
#include "cli/launches_setup.hpp"

#include <dlfcn.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/install_paths.hpp"
#include "cli/records_dir.hpp"
#include "core/regular_file.hpp"
#include "kernels/record/launch_record.hpp"
#include "kernels/record/launch_record_read.hpp"

namespace gpulens::cli {
namespace {

namespace fs = std::filesystem;

constexpr const char* kLibrary = "libgpulens_launches.so";

// A file's one record, checked and written again by gpulens: the recording holds
// only records gpulens can read. A file that is not one becomes a refusal line.
std::string record_line(int dir_fd, const fs::path& name) {
  const auto refused = [&](const std::string& why) {
    return nlohmann::json{{kernels::launch_record::version_key, kernels::launch_record::version},
                          {"refused", name.string() + ": " + why}}
        .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  };
  auto fd = open_regular_file_at(dir_fd, name.string());
  if (!fd) return refused(fd.error().message);
  std::string text;
  char buf[65536];
  ssize_t n = 0;
  while (text.size() <= kMaxLaunchRecordBytes && (n = ::read(*fd, buf, sizeof buf)) > 0) {
    text.append(buf, static_cast<std::size_t>(n));
  }
  ::close(*fd);
  if (text.size() > kMaxLaunchRecordBytes) {
    return refused(fmt::format("larger than {} MiB", kMaxLaunchRecordBytes >> 20));
  }
  const auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) return refused("not JSON");
  auto record = kernels::read_launch_record(j);
  if (const auto* why = std::get_if<std::string>(&record)) return refused(*why);
  return kernels::launch_record_line(std::get<kernels::LaunchRecord>(record));
}

}  // namespace

std::string find_launches_library(const std::string& exe_dir) {
  return private_library_for(exe_dir, kLibrary);
}

LaunchesSetup prepare_launches(const std::string& run_dir) {
  LaunchesSetup s;
  const std::string lib = private_library("GPULENS_LAUNCHES_LIB", kLibrary);
  if (lib.empty()) {
    s.unavailable = std::getenv("GPULENS_LAUNCHES_LIB") != nullptr
                        ? "$GPULENS_LAUNCHES_LIB names no file"
                        : std::string(kLibrary) + " is not beside gpulens nor in ../lib/gpulens";
    return s;
  }
  // Loaded here first, so that a library this system cannot load is said here and
  // never reaches the job, where the loader would print its error for every process.
  if (void* h = dlopen(lib.c_str(), RTLD_LAZY | RTLD_LOCAL); h != nullptr) {
    dlclose(h);
  } else {
    const char* why = dlerror();
    s.unavailable = std::string(kLibrary) + " cannot be loaded on this system (" +
                    (why != nullptr ? why : lib) + ")";
    return s;
  }
  s.records_dir = run_dir + "/launches";
  std::string why;
  s.records_dir_fd = make_records_dir(s.records_dir, why);
  if (!s.records_dir_fd) {
    s.unavailable = fmt::format("cannot make {}: {}", s.records_dir, why);
    return s;
  }
  s.env = {{"GPULENS_LAUNCHES_DIR", s.records_dir}};
  prepend_preload(s.env, lib);
  return s;
}

void prepend_preload(EnvList& env, const std::string& lib) {
  for (auto& [key, value] : env) {
    if (key == "LD_PRELOAD") {
      value = value.empty() ? lib : lib + ":" + value;
      return;
    }
  }
  const char* own = std::getenv("LD_PRELOAD");
  env.emplace_back("LD_PRELOAD",
                   own != nullptr && *own != '\0' ? lib + ":" + std::string(own) : lib);
}

std::string merge_launch_records(const LaunchesSetup& setup, const std::string& trace_path) {
  if (!setup.unavailable.empty() || !setup.records_dir_fd) return {};
  const int dir_fd = *setup.records_dir_fd;
  const auto files = list_records(dir_fd, {".json"});
  std::ofstream out(trace_path, std::ios::app);
  std::size_t written = 0;
  bool stopped = false;  // the files left are said in one line, once
  for (std::size_t i = 0; i < files.size(); ++i) {
    const std::string line =
        stopped || i >= kMaxLaunchRecordFiles ? std::string() : record_line(dir_fd, files[i]);
    if (!stopped &&
        (i >= kMaxLaunchRecordFiles || written + line.size() + 1 > kMaxLaunchRecordsMerged)) {
      stopped = true;
      out << nlohmann::json{{kernels::launch_record::version_key, kernels::launch_record::version},
                            {"refused",
                             fmt::format("{} and {} more launch record files not read (at most "
                                         "{} files and {} MiB are)",
                                         files[i].string(), files.size() - i - 1,
                                         kMaxLaunchRecordFiles, kMaxLaunchRecordsMerged >> 20)}}
                 .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
          << '\n';
    } else if (!stopped) {
      written += line.size() + 1;
      out << line << '\n';
    }
    // unlinkat never follows a link: a planted one goes, not what it names.
    ::unlinkat(dir_fd, files[i].c_str(), 0);
  }
  // Temporary files of a process killed while writing (record_writer.cpp).
  for (const auto& tmp : list_records(dir_fd, {".tmp"})) ::unlinkat(dir_fd, tmp.c_str(), 0);
  remove_records_dir(setup.records_dir, dir_fd);
  out.flush();
  if (!out) return "cannot add the launch records to " + trace_path;
  return {};
}

}  // namespace gpulens::cli
