// SPDX-License-Identifier: Apache-2.0
// dcgm-exporter's default fields that the classic readings lack, where NVML gives
// them (issue 48): encoder and decoder utilization and remapped rows every tick
// (0.3-1.3 us each on an H200), the PCIe replay counter every link_errors_refresh_s
// (0.18 ms) and the NVLink error counters in passes of one link a tick every
// nvlink_errors_refresh_s (0.9 ms per link and counter with NVLink active:
// docs/nvml-facts.md). A field the driver or the GPU cannot give is absent, with
// the reason in the device's unsupported list, never 0.
#include <array>
#include <cstddef>
#include <optional>
#include <string>

#include "sources/nvml/nvml_device.hpp"

namespace gpulens::sources::nvml_detail {
namespace {

using nvml::Return;

// In the order of Metric's NVLink members and of LinkErrorState's counters.
struct NvlinkCounter {
  unsigned id;  // nvmlNvLinkErrorCounter_t
  Metric metric;
  const char* function;  // for reasons
};
constexpr std::array<NvlinkCounter, LinkErrorState::kNvlinkCounters> kNvlinkCounters{{
    {nvml::kNvlinkErrorDlCrcFlit, Metric::NvlinkCrcFlitErrors,
     "nvmlDeviceGetNvLinkErrorCounter(DL_CRC_FLIT)"},
    {nvml::kNvlinkErrorDlCrcData, Metric::NvlinkCrcDataErrors,
     "nvmlDeviceGetNvLinkErrorCounter(DL_CRC_DATA)"},
    {nvml::kNvlinkErrorDlReplay, Metric::NvlinkReplayErrors,
     "nvmlDeviceGetNvLinkErrorCounter(DL_REPLAY)"},
    {nvml::kNvlinkErrorDlRecovery, Metric::NvlinkRecoveryErrors,
     "nvmlDeviceGetNvLinkErrorCounter(DL_RECOVERY)"},
}};

void read_codec(const NvmlApi& api, DeviceSlot& slot, MetricValues& out) {
  unsigned util = 0;
  unsigned period_us = 0;
  if (slot.use(Call::EncoderUtilization) &&
      accept(slot, Call::EncoderUtilization,
             api.deviceGetEncoderUtilization(slot.handle, &util, &period_us))) {
    out.set(Metric::EncUtil, util);
  }
  if (slot.use(Call::DecoderUtilization) &&
      accept(slot, Call::DecoderUtilization,
             api.deviceGetDecoderUtilization(slot.handle, &util, &period_us))) {
    out.set(Metric::DecUtil, util);
  }
}

void read_remapped_rows(const NvmlApi& api, DeviceSlot& slot, MetricValues& out) {
  if (!slot.use(Call::RemappedRows)) return;
  unsigned correctable = 0;
  unsigned uncorrectable = 0;
  unsigned pending = 0;
  unsigned failed = 0;
  if (!accept(slot, Call::RemappedRows,
              api.deviceGetRemappedRows(slot.handle, &correctable, &uncorrectable, &pending,
                                        &failed))) {
    return;
  }
  out.set(Metric::RemappedRowsCorrectable, correctable);
  out.set(Metric::RemappedRowsUncorrectable, uncorrectable);
  out.set(Metric::RowRemapFailure, failed != 0 ? 1 : 0);
}

// Every counter still on, on one active link. While probing, a counter the first
// link refuses for good is switched off with its reason; later refusals keep the last
// value.
void read_nvlink_link(const NvmlApi& api, DeviceSlot& slot, std::size_t i) {
  LinkErrorState& e = slot.link_errors;
  for (std::size_t c = 0; c < kNvlinkCounters.size(); ++c) {
    if (!e.nvlink_on.test(c)) continue;
    const NvlinkCounter& counter = kNvlinkCounters[c];
    unsigned long long value = 0;
    const Return r =
        api.deviceGetNvLinkErrorCounter(slot.handle, slot.nvlinks_active[i], counter.id, &value);
    if (slot.ok(r)) {
      e.nvlink[i][c] = static_cast<double>(value);
    } else if (slot.probing && permanent(r) && i == 0) {
      e.nvlink_on.reset(c);
      add_unsupported(slot.info, counter.metric, reason_for(r, counter.function));
    }
  }
}

// PCIe replays: NVML's own counter since the driver loaded, read every
// link_errors_refresh_s and repeated in between, so that a scrape between two reads
// sees the last count rather than a gap. A read that fails keeps the last value and
// is tried again a refresh later, not at the next tick (the call is dear).
void read_pcie_replays(const NvmlApi& api, DeviceSlot& slot, double now, MetricValues& out) {
  if (!slot.use(Call::PcieReplays)) return;
  LinkErrorState& e = slot.link_errors;
  if (!e.read_at || now - *e.read_at >= slot.link_errors_refresh_s) {
    e.read_at = now;
    unsigned replays = 0;
    if (accept(slot, Call::PcieReplays, api.deviceGetPcieReplayCounter(slot.handle, &replays))) {
      e.pcie_replays = replays;
    }
  }
  if (e.pcie_replays) out.set(Metric::PcieReplays, *e.pcie_replays);
}

// NVLink errors, NVML's counters since the driver loaded. One call costs ~0.9 ms of
// driver time per link and counter on an H200, so a pass reads one link a tick (a
// tick is never made late by all of them at once) and begins every
// nvlink_errors_refresh_s. The GPU's sums appear once every link has been read, so
// that a counter never climbs while a first pass fills in, and repeat the last
// values in between.
void read_nvlink_errors(const NvmlApi& api, DeviceSlot& slot, double now, MetricValues& out) {
  if (!slot.use(Call::NvlinkErrors)) return;
  LinkErrorState& e = slot.link_errors;
  const auto running = [&e] { return e.pass_begun_at && e.next_link < e.nvlink.size(); };
  if (!running() && (!e.pass_begun_at || now - *e.pass_begun_at >= slot.nvlink_errors_refresh_s)) {
    e.pass_begun_at = now;
    e.next_link = 0;
  }
  if (running()) {
    read_nvlink_link(api, slot, e.next_link);
    if (slot.probing && e.nvlink_on.none()) {
      slot.switch_off(Call::NvlinkErrors);
      return;
    }
    if (++e.next_link == e.nvlink.size()) e.pass_done = true;
  }
  if (!e.pass_done) return;
  for (std::size_t c = 0; c < kNvlinkCounters.size(); ++c) {
    if (!e.nvlink_on.test(c)) continue;
    // The GPU's count is the sum over its active links, as dcgm-exporter's
    // *_ERROR_COUNT_TOTAL fields are; a link whose reads have all failed adds nothing.
    std::optional<double> sum;
    for (const auto& link : e.nvlink) {
      if (link[c]) sum = sum.value_or(0) + *link[c];
    }
    if (sum) out.set(kNvlinkCounters[c].metric, *sum);
  }
}

}  // namespace

void probe_dcgm_fields(const NvmlApi& api, DeviceSlot& slot) {
  const auto enable = [&](Call c, bool loaded) {
    if (!slot.dcgm_fields) {
      switch_off_with_reason(slot, c,
                             "n/a: not read (the collector was opened without dcgm fields)");
    } else if (loaded) {
      slot.calls.set(static_cast<std::size_t>(c));
    } else {
      switch_off_with_reason(slot, c,
                             std::string("n/a: this NVIDIA driver lacks ") + call_function(c));
    }
  };
  enable(Call::EncoderUtilization, api.deviceGetEncoderUtilization != nullptr);
  enable(Call::DecoderUtilization, api.deviceGetDecoderUtilization != nullptr);
  enable(Call::RemappedRows, api.deviceGetRemappedRows != nullptr);
  enable(Call::PcieReplays, api.deviceGetPcieReplayCounter != nullptr);
  enable(Call::NvlinkErrors, api.deviceGetNvLinkErrorCounter != nullptr);
  if (!slot.use(Call::NvlinkErrors)) return;
  // Each call costs as much on a link that is down or absent as on an active one,
  // so only the links NVLink state called active at open are read.
  if (api.deviceGetNvLinkState == nullptr) {
    switch_off_with_reason(slot, Call::NvlinkErrors,
                           "n/a: this NVIDIA driver lacks nvmlDeviceGetNvLinkState, so no "
                           "link is known to be active");
  } else if (slot.nvlinks_active.empty()) {
    switch_off_with_reason(slot, Call::NvlinkErrors, "n/a: no active NVLink link on this GPU");
  } else {
    slot.link_errors.nvlink.assign(slot.nvlinks_active.size(), {});
    slot.link_errors.nvlink_on.set();
  }
}

void read_dcgm_fields(const NvmlApi& api, DeviceSlot& slot, MetricValues& out) {
  read_codec(api, slot, out);
  read_remapped_rows(api, slot, out);
}

void read_link_errors(const NvmlApi& api, DeviceSlot& slot, double now, MetricValues& out) {
  read_pcie_replays(api, slot, now, out);
  read_nvlink_errors(api, slot, now, out);
}

}  // namespace gpulens::sources::nvml_detail
