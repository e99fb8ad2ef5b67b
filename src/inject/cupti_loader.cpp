// SPDX-License-Identifier: Apache-2.0
#include "inject/cupti_loader.hpp"

#include <dlfcn.h>
#include <link.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace gpulens::inject {
namespace {

const char* const kSonames[] = {"libcupti.so.13", "libcupti.so.12", "libcupti.so.11.8",
                                "libcupti.so"};

// Directories of the shared objects already loaded whose path says they came with
// a CUDA wheel or PyTorch: the nvidia-cuda-cupti wheel lies beside them.
std::vector<std::string> loaded_library_paths() {
  std::vector<std::string> out;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        if (info->dlpi_name != nullptr && info->dlpi_name[0] != '\0') {
          static_cast<std::vector<std::string>*>(data)->emplace_back(info->dlpi_name);
        }
        return 0;
      },
      &out);
  return out;
}

void* try_open(const std::string& path, CuptiLibrary& lib) {
  lib.searched.push_back(path);
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (h != nullptr) lib.path = path;
  return h;
}

// site-packages/nvidia/... for a loaded library under site-packages.
std::vector<std::string> wheel_candidates(const std::vector<std::string>& loaded) {
  std::vector<std::string> out;
  for (const auto& p : loaded) {
    const auto pos = p.rfind("/site-packages/");
    const auto pos2 = p.rfind("/dist-packages/");
    const auto at = pos != std::string::npos ? pos : pos2;
    if (at == std::string::npos) continue;
    const std::string site = p.substr(0, at + std::strlen("/site-packages/"));
    for (const char* sub : {"nvidia/cuda_cupti/lib", "nvidia/cu13/lib", "nvidia/cu12/lib"}) {
      for (const char* so : kSonames) {
        const std::string c = site + sub + "/" + so;
        bool seen = false;
        for (const auto& o : out) seen = seen || o == c;
        if (!seen) out.push_back(c);
      }
    }
  }
  return out;
}

}  // namespace

CuptiLibrary open_cupti() {
  CuptiLibrary lib;
  const auto loaded = loaded_library_paths();
  // 1. The job already has one: use that very copy.
  for (const auto& p : loaded) {
    if (std::filesystem::path(p).filename().string().rfind("libcupti.so", 0) == 0) {
      lib.searched.push_back(p + " (loaded)");
      lib.handle = dlopen(p.c_str(), RTLD_NOW | RTLD_NOLOAD);
      if (lib.handle != nullptr) {
        lib.path = p;
        lib.job_loaded = true;
        return lib;
      }
    }
  }
  // 2. The user's choice, and then nothing else.
  if (const char* env = std::getenv("GPULENS_CUPTI"); env != nullptr && *env != '\0') {
    lib.handle = try_open(env, lib);
    return lib;
  }
  // 3. The wheel beside the job's PyTorch.
  for (const auto& c : wheel_candidates(loaded)) {
    if (!std::filesystem::exists(c)) continue;
    if ((lib.handle = try_open(c, lib)) != nullptr) return lib;
  }
  // 4. The loader's search path.
  for (const char* so : kSonames) {
    if ((lib.handle = try_open(so, lib)) != nullptr) {
      Dl_info info{};
      // The path the loader picked, for the report.
      if (void* sym = dlsym(lib.handle, "cuptiGetVersion"); sym != nullptr && dladdr(sym, &info)) {
        if (info.dli_fname != nullptr) lib.path = info.dli_fname;
      }
      return lib;
    }
  }
  // 5. The toolkit.
  if (const char* env = std::getenv("GPULENS_TOOLKIT_CUPTI"); env != nullptr && *env != '\0') {
    if ((lib.handle = try_open(env, lib)) != nullptr) return lib;
  }
  std::vector<std::string> roots;
  if (const char* h = std::getenv("CUDA_HOME"); h != nullptr && *h != '\0') roots.emplace_back(h);
  if (const char* h = std::getenv("CUDA_PATH"); h != nullptr && *h != '\0') roots.emplace_back(h);
  roots.emplace_back("/usr/local/cuda");
  for (const auto& r : roots) {
    for (const char* sub : {"/lib64/", "/extras/CUPTI/lib64/", "/targets/x86_64-linux/lib/"}) {
      for (const char* so : kSonames) {
        const std::string c = r + sub + so;
        if (!std::filesystem::exists(c)) continue;
        if ((lib.handle = try_open(c, lib)) != nullptr) return lib;
      }
    }
  }
  return lib;
}

bool job_may_profile(const CuptiLibrary& lib) {
  if (lib.job_loaded) return true;
  for (const auto& p : loaded_library_paths()) {
    const std::string name = std::filesystem::path(p).filename().string();
    if (name.rfind("libtorch_cuda", 0) == 0 || name.rfind("libkineto", 0) == 0) return true;
  }
  return false;
}

}  // namespace gpulens::inject
