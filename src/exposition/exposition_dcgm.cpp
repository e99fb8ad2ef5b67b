// SPDX-License-Identifier: Apache-2.0
// --compat dcgm: the same readings under dcgm-exporter's names, labels and units
// (utilizations in percent, PROF fields as 0-1 ratios, memory in MiB, clocks in
// MHz, energy in mJ), so that existing dcgm dashboards and alert rules work.
#include <cstdint>

#include "core/xid.hpp"
#include "exposition/exposition.hpp"
#include "exposition/prom_writer.hpp"

namespace gpulens::exposition {
namespace {

struct DcgmField {
  const char* name;
  const char* type;
  const char* help;  // dcgm-exporter's own help text
  Metric metric;
  double scale;
};

// In dcgm-exporter's default-counters order; TYPE as dcgm-exporter declares it.
constexpr DcgmField kFields[] = {
    {"DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz).", Metric::SmClockMhz, 1},
    {"DCGM_FI_DEV_MEM_CLOCK", "gauge", "Memory clock frequency (in MHz).", Metric::MemClockMhz, 1},
    {"DCGM_FI_DEV_MEMORY_TEMP", "gauge", "Memory temperature (in C).", Metric::MemTempC, 1},
    {"DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C).", Metric::TempC, 1},
    {"DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W).", Metric::PowerW, 1},
    {"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "counter",
     "Total energy consumption since boot (in mJ).", Metric::EnergyMj, 1},
    {"DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %).", Metric::GpuUtil, 1},
    {"DCGM_FI_DEV_MEM_COPY_UTIL", "gauge", "Memory utilization (in %).", Metric::MemUtil, 1},
    {"DCGM_FI_DEV_ENC_UTIL", "gauge", "Encoder utilization (in %).", Metric::EncUtil, 1},
    {"DCGM_FI_DEV_DEC_UTIL", "gauge", "Decoder utilization (in %).", Metric::DecUtil, 1},
    {"DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB).", Metric::MemUsedMib, 1},
    {"DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "counter",
     "Number of remapped rows for uncorrectable errors", Metric::RemappedRowsUncorrectable, 1},
    {"DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", "counter",
     "Number of remapped rows for correctable errors", Metric::RemappedRowsCorrectable, 1},
    {"DCGM_FI_DEV_ROW_REMAP_FAILURE", "gauge", "Whether remapping of rows has failed",
     Metric::RowRemapFailure, 1},
    {"DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "counter", "Total number of PCIe retries.",
     Metric::PcieReplays, 1},
    {"DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", "gauge", "Current clock throttle reasons.",
     Metric::ClockEventReasons, 1},
    {"DCGM_FI_DEV_CLOCKS_EVENT_REASONS", "gauge", "Current clock event reasons.",
     Metric::ClockEventReasons, 1},
    {"DCGM_FI_DEV_PSTATE", "gauge", "Performance state (P-State) 0-15. 0=highest", Metric::Pstate,
     1},
    {"DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "counter", "Total number of single-bit volatile ECC errors.",
     Metric::EccCorrected, 1},
    {"DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "counter", "Total number of double-bit volatile ECC errors.",
     Metric::EccUncorrected, 1},
    {"DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", "counter",
     "Total number of NVLink flow-control CRC errors.", Metric::NvlinkCrcFlitErrors, 1},
    {"DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL", "counter",
     "Total number of NVLink data CRC errors.", Metric::NvlinkCrcDataErrors, 1},
    {"DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL", "counter", "Total number of NVLink retries.",
     Metric::NvlinkReplayErrors, 1},
    {"DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL", "counter",
     "Total number of NVLink recovery errors.", Metric::NvlinkRecoveryErrors, 1},
    {"DCGM_FI_PROF_GR_ENGINE_ACTIVE", "gauge", "Ratio of time the graphics engine is active.",
     Metric::GraphicsActive, 0.01},
    {"DCGM_FI_PROF_SM_ACTIVE", "gauge", "The ratio of cycles an SM has at least 1 warp assigned.",
     Metric::SmActive, 0.01},
    {"DCGM_FI_PROF_SM_OCCUPANCY", "gauge", "The ratio of number of warps resident on an SM.",
     Metric::SmOccupancy, 0.01},
    {"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "gauge",
     "Ratio of cycles the tensor (HMMA) pipe is active.", Metric::TensorActive, 0.01},
    {"DCGM_FI_PROF_PIPE_TENSOR_HMMA_ACTIVE", "gauge",
     "Ratio of cycles the tensor (HMMA) pipe is active.", Metric::HmmaActive, 0.01},
    {"DCGM_FI_PROF_PIPE_TENSOR_IMMA_ACTIVE", "gauge",
     "Ratio of cycles the tensor (IMMA) pipe is active.", Metric::ImmaActive, 0.01},
    {"DCGM_FI_PROF_PIPE_TENSOR_DFMA_ACTIVE", "gauge",
     "Ratio of cycles the tensor (DFMA) pipe is active.", Metric::DfmaActive, 0.01},
    {"DCGM_FI_PROF_DRAM_ACTIVE", "gauge",
     "Ratio of cycles the device memory interface is active sending or receiving data.",
     Metric::DramActive, 0.01},
    {"DCGM_FI_PROF_PIPE_FP64_ACTIVE", "gauge", "Ratio of cycles the fp64 pipes are active.",
     Metric::Fp64Active, 0.01},
    {"DCGM_FI_PROF_PIPE_FP32_ACTIVE", "gauge", "Ratio of cycles the fp32 pipes are active.",
     Metric::Fp32Active, 0.01},
    {"DCGM_FI_PROF_PIPE_FP16_ACTIVE", "gauge", "Ratio of cycles the fp16 pipes are active.",
     Metric::Fp16Active, 0.01},
    {"DCGM_FI_PROF_PIPE_INT_ACTIVE", "gauge", "Ratio of cycles the integer pipe is active.",
     Metric::IntActive, 0.01},
    {"DCGM_FI_PROF_PCIE_TX_BYTES", "gauge",
     "The rate of data transmitted over the PCIe bus - including both protocol headers and "
     "data payloads - in bytes per second.",
     Metric::PcieTxMibs, 1024.0 * 1024.0},
    {"DCGM_FI_PROF_PCIE_RX_BYTES", "gauge",
     "The rate of data received over the PCIe bus - including both protocol headers and data "
     "payloads - in bytes per second.",
     Metric::PcieRxMibs, 1024.0 * 1024.0},
    {"DCGM_FI_PROF_NVLINK_TX_BYTES", "gauge",
     "The rate of data transmitted over NVLink, not including protocol headers, in bytes per "
     "second.",
     Metric::NvlinkTxMibs, 1024.0 * 1024.0},
    {"DCGM_FI_PROF_NVLINK_RX_BYTES", "gauge",
     "The rate of data received over NVLink, not including protocol headers, in bytes per "
     "second.",
     Metric::NvlinkRxMibs, 1024.0 * 1024.0},
};

// dcgm-exporter's labels: gpu, UUID, device (nvidia<minor>), modelName, Hostname,
// and the driver version; pci_bus_id when the recording knows it. On a Kubernetes
// node also container, namespace and pod of the pod using the GPU, empty strings
// when none is, as dcgm-exporter writes them (in its sorted order).
std::string dcgm_labels(const agent::LiveSnapshot& snap, const agent::GpuLive& g) {
  std::string l;
  append_label(l, "gpu", std::to_string(g.device.index));
  append_label(l, "UUID", g.device.uuid);
  append_label(l, "device", "nvidia" + std::to_string(g.device.index));
  append_label(l, "modelName", g.device.name);
  // The NVML probe stores it as x_pci_bus_id (the trace format's prefix for
  // extras); older recordings may carry it unprefixed.
  for (const char* key : {"x_pci_bus_id", "pci_bus_id"}) {
    if (const auto it = g.device.extra.find(key); it != g.device.extra.end() && it->is_string()) {
      append_label(l, "pci_bus_id", it->get<std::string>());
      break;
    }
  }
  append_label(l, "Hostname", snap.hostname);
  append_label(l, "DCGM_FI_DRIVER_VERSION", snap.driver);
  if (snap.kube.kubernetes) {
    const sources::KubeRef pod = agent::kube_of_gpu(snap, g);
    append_label(l, "container", pod.container);
    append_label(l, "namespace", pod.namespace_name);
    append_label(l, "pod", pod.pod);
  }
  return l;
}

}  // namespace

void render_dcgm_metrics(std::string& out, const agent::LiveSnapshot& snap) {
  PromWriter w(out);
  std::vector<std::string> labels;
  for (const auto& g : snap.gpus) labels.push_back(dcgm_labels(snap, g));
  auto each = [&](const char* name, const char* type, const char* help, auto value_of) {
    bool any = false;
    for (std::size_t i = 0; i < snap.gpus.size(); ++i) {
      const std::optional<double> v = value_of(snap.gpus[i]);
      if (!v) continue;
      if (!any) w.family(name, type, help);
      any = true;
      w.sample(name, labels[i], *v);
    }
  };
  for (const auto& f : kFields) {
    each(f.name, f.type, f.help, [&f](const agent::GpuLive& g) -> std::optional<double> {
      if (!g.sample) return std::nullopt;
      const auto v = g.sample->values.get(f.metric);
      if (!v) return std::nullopt;
      return scaled(*v, f.scale);
    });
    if (f.metric == Metric::MemUsedMib) {
      each("DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB).",
           [](const agent::GpuLive& g) -> std::optional<double> {
             if (!g.sample || !g.device.mem_total_mib) return std::nullopt;
             const auto used = g.sample->values.get(Metric::MemUsedMib);
             if (!used) return std::nullopt;
             return *g.device.mem_total_mib - *used;
           });
    }
  }
  // NVML's PCIe throughput fields: dcgm-exporter declares them counters but
  // their value is KB/s over NVML's short window; the same reading, in its units.
  each("DCGM_FI_DEV_PCIE_TX_THROUGHPUT", "counter",
       "Total number of bytes transmitted through PCIe TX (in KB) via NVML.",
       [](const agent::GpuLive& g) -> std::optional<double> {
         if (!g.sample) return std::nullopt;
         const auto v = g.sample->values.get(Metric::PcieTxMibs);
         if (!v) return std::nullopt;
         return *v * 1024.0;
       });
  each("DCGM_FI_DEV_PCIE_RX_THROUGHPUT", "counter",
       "Total number of bytes received through PCIe RX (in KB) via NVML.",
       [](const agent::GpuLive& g) -> std::optional<double> {
         if (!g.sample) return std::nullopt;
         const auto v = g.sample->values.get(Metric::PcieRxMibs);
         if (!v) return std::nullopt;
         return *v * 1024.0;
       });
  each("DCGM_FI_DEV_FB_RESERVED", "gauge", "Framebuffer memory reserved (in MiB).",
       [](const agent::GpuLive& g) -> std::optional<double> {
         const auto it = g.device.extra.find("x_fb_reserved_mib");
         if (it == g.device.extra.end() || !it->is_number()) return std::nullopt;
         return it->get<double>();
       });
  each("DCGM_FI_DEV_POWER_MGMT_LIMIT", "gauge", "Power management limit (in W).",
       [](const agent::GpuLive& g) { return g.device.power_limit_w; });
  // The last XID with its code and meaning as labels (err_code, err_msg), as
  // dcgm-exporter writes them; 0 without them until a GPU reports one.
  bool xid_header = false;
  for (std::size_t i = 0; i < snap.gpus.size(); ++i) {
    if (!xid_header) {
      w.family("DCGM_FI_DEV_XID_ERRORS", "gauge", "Value of the last XID error encountered.");
      xid_header = true;
    }
    const auto& xid = snap.gpus[i].last_xid;
    std::string l = labels[i];
    if (xid) {
      append_label(l, "err_code", std::to_string(*xid));
      const auto meaning = xid_meaning(static_cast<long>(*xid));
      append_label(l, "err_msg", meaning.empty() ? "Unknown Error" : meaning);
    }
    w.sample("DCGM_FI_DEV_XID_ERRORS", l, static_cast<double>(xid.value_or(0)));
  }
}

}  // namespace gpulens::exposition
