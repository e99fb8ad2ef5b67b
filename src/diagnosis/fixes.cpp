// SPDX-License-Identifier: Apache-2.0
#include "diagnosis/fixes.hpp"

#include <fmt/format.h>

#include "core/clock_reasons.hpp"
#include "core/text_units.hpp"
#include "diagnosis/fix_format.hpp"
#include "diagnosis/state_table.hpp"

namespace gpulens::diagnosis {
std::string host_limited_copies_fix(const StateFacts& f, const WindowStats& window) {
  const std::string who =
      window.procs.top_cpu_pct
          ? fmt::format("{} at {} of a CPU core",
                        fmt_fix::process_label(window.procs.top_cpu_name, window.procs.top_cpu_pid),
                        points_text(*window.procs.top_cpu_pct))
          : std::string("a process at a full CPU core");
  return fmt::format(
      "Copies run at {}{} while {} stages them: pageable host memory. Copy from pinned memory "
      "(DataLoader pin_memory=True, tensor.pin_memory()) with non_blocking=True, and batch many "
      "small copies into one.",
      fmt_fix::gbytes_s(f.pcie_mibs.value_or(0)),
      f.pcie_share ? fmt::format(" ({} of the link)", share_text(*f.pcie_share)) : std::string(),
      who);
}

std::string cost_per_hour_text(const FixContext& ctx) {
  if (!ctx.price_per_gpu_hour || *ctx.price_per_gpu_hour <= 0) return {};
  return fmt::format("{}{:.2f} per hour", ctx.currency, *ctx.price_per_gpu_hour);
}

std::string describe_state(const StateFinding& finding, const HardwareLimits& hw) {
  return state_row(finding.state).summary(finding, hw);
}

std::string describe_throttle(const ThrottleFinding& t) {
  if (!t.throttled) return {};
  std::string out = t.cause;
  if (t.sm_clock_mhz && t.max_sm_clock_mhz) {
    out += fmt::format(": SM clock {:.0f} of {:.0f} MHz", *t.sm_clock_mhz, *t.max_sm_clock_mhz);
  }
  if (t.power_w && t.power_limit_w) {
    out += fmt::format(", {:.0f} of {:.0f} W", *t.power_w, *t.power_limit_w);
  }
  if (t.temp_c) out += fmt::format(", {:.0f} C", *t.temp_c);
  return out;
}

std::vector<std::string> fixes_for_state(const StateFinding& finding, const WindowStats& window,
                                         const HardwareLimits& hw, const FixContext& ctx) {
  const FixInput in{finding, window, hw, ctx};
  std::vector<std::string> out;
  for (const FixRow& row : state_row(finding.state).fixes) {
    if (row.premise == nullptr || row.premise(in)) out.push_back(row.text(in));
  }
  return out;
}

std::vector<std::string> fixes_for_throttle(const ThrottleFinding& t) {
  std::vector<std::string> out;
  if (!t.throttled) return out;
  using namespace clock_reason;
  if (t.reasons & (kSwThermal | kHwThermal)) {
    out.push_back("Cool the GPU: check fans, airflow, inlet temperature and dust.");
  }
  if (t.reasons & (kSwPowerCap | kHwPowerBrake | kHwSlowdown)) {
    out.push_back(
        "Clocks are held down by the power limit: expected under heavy tensor load; "
        "check `nvidia-smi -q -d POWER` that the limit is the default maximum.");
  }
  if (t.reasons & (kHwSlowdown | kHwPowerBrake)) {
    out.push_back(
        "A hardware slowdown or power brake points to the power supply or the "
        "chassis: ask the operator to check them.");
  }
  return out;
}

std::vector<std::string> fixes_for_alert(std::string_view rule, const StateFinding& finding,
                                         const WindowStats& window, const HardwareLimits& hw,
                                         const FixContext& ctx) {
  if (rule == "high_util_low_activity" || rule == "low_efficiency" ||
      rule == "idle_holding_memory") {
    return fixes_for_state(finding, window, hw, ctx);
  }
  if (rule == "stalled") {
    return {
        "Confirm the hang: a kernel spins while nothing progresses, the signature of a hung "
        "collective (NCCL) or a deadlock. Dump the Python stacks of every rank (py-spy dump "
        "--pid PID): ranks stuck in different collectives, or one rank elsewhere, name the "
        "culprit.",
        "Rerun with NCCL_DEBUG=INFO (NCCL_DEBUG_SUBSYS=COLL) to log each collective, and set a "
        "process-group timeout (torch.distributed.init_process_group(timeout=...)) with "
        "TORCH_NCCL_ASYNC_ERROR_HANDLING=1 so that a hang becomes an error.",
        "For a custom kernel, attach cuda-gdb -p PID and `info cuda kernels` to see where its "
        "warps wait."};
  }
  if (rule == "memory_growth") {
    return {
        "Look for tensors kept across steps: accumulating the loss without .item() or "
        ".detach(), lists of outputs, caches that never evict.",
        "Compare torch.cuda.memory_allocated() between steps; "
        "torch.cuda.memory._record_memory_history() shows who allocates."};
  }
  if (rule == "gpu_imbalance") {
    return {
        "Give every rank the same work (balanced shards, equal sequence lengths per rank), "
        "and keep rank-0-only work off the critical path."};
  }
  if (rule == "xid_error") {
    return {
        "Check `dmesg` for NVRM lines; XID 13/31/43 usually come from the application, "
        "48/63/64/74/79/92/94/95/119 from the hardware or driver: drain the node and "
        "ask the operator to reset or replace the GPU."};
  }
  if (rule == "gpu_lost") {
    return {
        "The GPU fell off the bus or stopped answering: drain the node; a reset "
        "(nvidia-smi -r) or a reboot is needed, and a repeat means hardware service."};
  }
  return {};
}

}  // namespace gpulens::diagnosis
