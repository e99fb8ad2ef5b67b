// SPDX-License-Identifier: Apache-2.0
#include "cli/kernel_evidence.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <utility>

#include "cli/report_setup.hpp"

namespace gpulens::cli {
namespace {

// The kernels handed to the fixes: the few that hold most of the time.
constexpr std::size_t kEvidenceKernels = 5;

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace

std::string kernel_dtype(std::string_view demangled) {
  // Narrowest first: a name that says bf16 and float is a bf16 kernel with fp32
  // accumulation; "tf32" before "f32", "bf16" before "f16".
  static const std::array<std::pair<const char*, std::array<const char*, 4>>, 7> kTypes{{
      {"fp8", {"e4m3", "e5m2", "fp8", "float8"}},
      {"int8", {"int8", "imma", "s8s8", "i8i8"}},
      {"bf16", {"bfloat16", "bf16", "", ""}},
      {"fp16", {"half", "f16", "hgemm", ""}},
      {"tf32", {"tf32", "", "", ""}},
      {"fp32", {"float", "f32", "sgemm", ""}},
      {"fp64", {"double", "f64", "dgemm", ""}},
  }};
  const std::string name = lower(demangled);
  for (const auto& [type, words] : kTypes) {
    for (const char* w : words) {
      if (*w != '\0' && name.find(w) != std::string::npos) return type;
    }
  }
  return {};
}

bool elementwise_kernel(std::string_view demangled) {
  const std::string name = lower(demangled);
  return name.find("elementwise") != std::string::npos ||
         name.find("reduce_kernel") != std::string::npos;
}

diagnosis::KernelEvidence kernel_evidence(const kernels::KernelView& view) {
  diagnosis::KernelEvidence e;
  std::uint64_t elementwise_launches = 0;
  for (const auto& k : view.top) {
    if (k.collective) continue;  // communication: the kernel view's own finding
    const bool ew = elementwise_kernel(k.name);
    if (ew) {
      ++e.elementwise_kernels;
      elementwise_launches += k.count;
    }
    // Template instances of one kernel (PyTorch's vectorized_elementwise_kernel
    // for each functor) share a short name: named once, with their time summed.
    const std::string dtype = kernel_dtype(k.name);
    const auto same = std::find_if(e.top.begin(), e.top.end(), [&](const auto& t) {
      return t.name == k.short_name && t.dtype == dtype;
    });
    if (same != e.top.end()) {
      same->share += k.share;
    } else if (e.top.size() < kEvidenceKernels) {
      e.top.push_back({k.short_name, k.share, dtype, ew});
    }
  }
  e.syncs = view.syncs;
  e.syncs_recorded = view.syncs_recorded;
  // Synchronisations not recorded: how often the host waits is unknown, not zero.
  if (view.launches > 0 && view.syncs_recorded) {
    e.syncs_per_launch = static_cast<double>(view.syncs) / static_cast<double>(view.launches);
  }
  if (!view.devices.empty()) {
    const auto& d = view.devices.front();
    if (d.steps && d.steps->steps > 0) {
      if (view.syncs_recorded) {
        e.syncs_per_step = d.steps->syncs_per_step;
        e.sync_s_per_step = d.steps->sync_s_per_step;
      }
      // A sampled view counts launches in its windows only: per step they would
      // read low, so only a view traced whole gives a rate per step.
      if (!view.sampling.sampled) {
        e.elementwise_per_step =
            static_cast<double>(elementwise_launches) / static_cast<double>(d.steps->steps);
      }
    }
    const double traced = view.sampling.sampled ? view.sampling.traced_s : d.activity.window_s;
    if (traced > 0 && view.syncs_recorded) e.sync_share = std::min(1.0, view.sync_s / traced);
  }
  for (const auto& c : view.copies) {
    if ((c.kind != "HtoD" && c.kind != "DtoH") || c.bytes < (1u << 20)) continue;
    if (c.pageable) {
      e.pageable_copies = true;
    } else if (c.src == "pinned" || c.dst == "pinned") {
      e.pinned_copies = true;
    }
  }
  return e;
}

void apply_kernel_view(verdict::VerdictOptions& options, const kernels::KernelView& view) {
  options.collectives = collective_evidence(view);
  options.kernel_view = view.available;
  if (view.available) options.diagnosis.kernels = kernel_evidence(view);
}

}  // namespace gpulens::cli
