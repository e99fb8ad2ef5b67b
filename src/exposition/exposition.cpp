// SPDX-License-Identifier: Apache-2.0
#include "exposition/exposition.hpp"

#include <array>
#include <cstring>
#include <set>

#include "core/clock_reasons.hpp"
#include "diagnosis/state.hpp"
#include "exposition/prom_writer.hpp"

namespace gpulens::exposition {
namespace {

constexpr double kPercent = 0.01;
constexpr double kMhz = 1e6;

// One series of a family: the metric it reads, the factor to base units, and
// an optional label that tells it from its siblings (direction="tx").
struct Member {
  Metric metric;
  double scale;
  const char* label = nullptr;
  const char* value = nullptr;
};

struct Family {
  const char* name;
  const char* type;
  const char* help;
  std::vector<Member> members;
};

// Every per-GPU family read from a Sample. A metric a GPU did not measure has
// no series at all: absent, never 0.
const std::vector<Family>& sample_families() {
  static const std::vector<Family> families = {
      {"gpulens_gpu_utilization_ratio",
       "gauge",
       "Share of time at least one kernel ran (NVML utilization.gpu, the classic number): "
       "a kernel on 1 SM reads 1",
       {{Metric::GpuUtil, kPercent}}},
      {"gpulens_memory_controller_busy_ratio",
       "gauge",
       "Share of time the memory controller was busy (NVML utilization.memory)",
       {{Metric::MemUtil, kPercent}}},
      {"gpulens_sm_active_ratio",
       "gauge",
       "Share of cycles an SM had at least one warp resident, averaged over all SMs (GPM)",
       {{Metric::SmActive, kPercent}}},
      {"gpulens_sm_occupancy_ratio",
       "gauge",
       "Resident warps over the theoretical maximum, averaged over all SMs (GPM)",
       {{Metric::SmOccupancy, kPercent}}},
      {"gpulens_tensor_active_ratio",
       "gauge",
       "Share of cycles any tensor pipe was active (GPM)",
       {{Metric::TensorActive, kPercent}}},
      {"gpulens_tensor_pipe_active_ratio",
       "gauge",
       "Share of cycles a tensor pipe of one kind was active (GPM): hmma FP16/BF16/TF32, "
       "imma integer, dfma FP64",
       {{Metric::HmmaActive, kPercent, "pipe", "hmma"},
        {Metric::ImmaActive, kPercent, "pipe", "imma"},
        {Metric::DfmaActive, kPercent, "pipe", "dfma"}}},
      {"gpulens_dram_active_ratio",
       "gauge",
       "DRAM bandwidth used over the theoretical peak (GPM)",
       {{Metric::DramActive, kPercent}}},
      {"gpulens_fp_pipe_active_ratio",
       "gauge",
       "Share of cycles a non-tensor floating-point pipe was active (GPM)",
       {{Metric::Fp64Active, kPercent, "precision", "fp64"},
        {Metric::Fp32Active, kPercent, "precision", "fp32"},
        {Metric::Fp16Active, kPercent, "precision", "fp16"}}},
      {"gpulens_int_pipe_active_ratio",
       "gauge",
       "Share of cycles the non-tensor integer pipe was active (GPM): integer-only kernels "
       "(hashing, indexing) show here while every floating-point and tensor pipe reads 0",
       {{Metric::IntActive, kPercent}}},
      {"gpulens_graphics_active_ratio",
       "gauge",
       "Share of time the graphics/compute engine was "
       "active (GPM)",
       {{Metric::GraphicsActive, kPercent}}},
      {"gpulens_pcie_throughput_bytes_per_second",
       "gauge",
       "PCIe traffic seen from the GPU (GPM); rx is host to device",
       {{Metric::PcieTxMibs, kMib, "direction", "tx"},
        {Metric::PcieRxMibs, kMib, "direction", "rx"}}},
      {"gpulens_nvlink_throughput_bytes_per_second",
       "gauge",
       "NVLink traffic, all links (GPM)",
       {{Metric::NvlinkTxMibs, kMib, "direction", "tx"},
        {Metric::NvlinkRxMibs, kMib, "direction", "rx"}}},
      {"gpulens_power_watts", "gauge", "Board power draw", {{Metric::PowerW, 1}}},
      {"gpulens_energy_joules_total",
       "counter",
       "Energy used since the driver loaded",
       {{Metric::EnergyMj, 0.001}}},
      {"gpulens_temperature_celsius", "gauge", "GPU temperature", {{Metric::TempC, 1}}},
      {"gpulens_memory_temperature_celsius", "gauge", "HBM temperature", {{Metric::MemTempC, 1}}},
      {"gpulens_sm_clock_hertz", "gauge", "Current SM clock", {{Metric::SmClockMhz, kMhz}}},
      {"gpulens_memory_clock_hertz",
       "gauge",
       "Current memory clock",
       {{Metric::MemClockMhz, kMhz}}},
      {"gpulens_clock_event_reasons",
       "gauge",
       "NVML clock event (throttle) reasons bitmask: 0x1 idle, 0x4 SW power cap, 0x8 HW "
       "slowdown, 0x20 SW thermal, 0x40 HW thermal, 0x80 power brake",
       {{Metric::ClockEventReasons, 1}}},
      {"gpulens_pstate",
       "gauge",
       "Performance state (0 fastest, 15 slowest)",
       {{Metric::Pstate, 1}}},
      {"gpulens_memory_used_bytes", "gauge", "Device memory in use", {{Metric::MemUsedMib, kMib}}},
      {"gpulens_ecc_corrected_errors_total",
       "counter",
       "Corrected ECC errors since the driver loaded (volatile)",
       {{Metric::EccCorrected, 1}}},
      {"gpulens_ecc_uncorrected_errors_total",
       "counter",
       "Uncorrected ECC errors since the driver loaded (volatile)",
       {{Metric::EccUncorrected, 1}}},
      {"gpulens_encoder_utilization_ratio",
       "gauge",
       "Share of time the video encoder (NVENC) was busy (NVML)",
       {{Metric::EncUtil, kPercent}}},
      {"gpulens_decoder_utilization_ratio",
       "gauge",
       "Share of time the video decoder (NVDEC) was busy (NVML)",
       {{Metric::DecUtil, kPercent}}},
      {"gpulens_memory_remapped_rows_total",
       "counter",
       "Device memory rows remapped to spares, by the kind of error that caused it",
       {{Metric::RemappedRowsCorrectable, 1, "error", "correctable"},
        {Metric::RemappedRowsUncorrectable, 1, "error", "uncorrectable"}}},
      {"gpulens_memory_row_remap_failed",
       "gauge",
       "1 once a row remap has failed (no spare row left: the GPU needs service)",
       {{Metric::RowRemapFailure, 1}}},
      {"gpulens_pcie_replays_total",
       "counter",
       "PCIe replays (link-level retransmissions) since the driver loaded, read every 30 s",
       {{Metric::PcieReplays, 1}}},
      {"gpulens_nvlink_errors_total",
       "counter",
       "NVLink data-link errors summed over the active links, read every 30 s: crc_flit and "
       "crc_data received with a bad CRC, replay retransmitted, recovery link retrained",
       {{Metric::NvlinkCrcFlitErrors, 1, "kind", "crc_flit"},
        {Metric::NvlinkCrcDataErrors, 1, "kind", "crc_data"},
        {Metric::NvlinkReplayErrors, 1, "kind", "replay"},
        {Metric::NvlinkRecoveryErrors, 1, "kind", "recovery"}}},
  };
  return families;
}

// Facts from the device description rather than the samples.
struct DeviceFact {
  const char* name;
  const char* help;
  std::optional<double> (*get)(const agent::GpuLive&);
};

const std::array<DeviceFact, 6> kDeviceFacts{{
    {"gpulens_memory_total_bytes", "Device memory size",
     [](const agent::GpuLive& g) -> std::optional<double> {
       if (g.device.mem_total_mib) return *g.device.mem_total_mib * kMib;
       return std::nullopt;
     }},
    {"gpulens_power_limit_watts", "Board power limit",
     [](const agent::GpuLive& g) { return g.device.power_limit_w; }},
    {"gpulens_sm_clock_max_hertz", "Maximum SM clock",
     [](const agent::GpuLive& g) -> std::optional<double> {
       if (g.device.max_sm_clock_mhz) return *g.device.max_sm_clock_mhz * kMhz;
       return std::nullopt;
     }},
    {"gpulens_memory_clock_max_hertz", "Maximum memory clock",
     [](const agent::GpuLive& g) -> std::optional<double> {
       if (g.device.max_mem_clock_mhz) return *g.device.max_mem_clock_mhz * kMhz;
       return std::nullopt;
     }},
    {"gpulens_streaming_multiprocessors", "Streaming multiprocessors (SMs) on the device",
     [](const agent::GpuLive& g) -> std::optional<double> {
       if (g.device.sm_count) return static_cast<double>(*g.device.sm_count);
       return std::nullopt;
     }},
    {"gpulens_pcie_link_max_bytes_per_second",
     "PCIe bandwidth per direction, from link "
     "generation and width",
     [](const agent::GpuLive& g) -> std::optional<double> {
       if (g.limits.pcie_mibs) return *g.limits.pcie_mibs * kMib;
       return std::nullopt;
     }},
}};

}  // namespace

std::optional<sources::KubeRef> single_pod_of_gpu(const agent::LiveSnapshot& snap,
                                                  const agent::GpuLive& gpu) {
  if (!snap.kube.kubernetes || !gpu.sample || !gpu.sample->procs) return std::nullopt;
  std::optional<sources::KubeRef> only;
  for (const auto& p : *gpu.sample->procs) {
    auto ref = agent::kube_of_process(snap, p);
    if (!ref) continue;
    if (!only) {
      only = std::move(*ref);
    } else if (only->namespace_name != ref->namespace_name || only->pod != ref->pod) {
      return std::nullopt;  // shared (time-slicing, MPS): no one pod to name
    } else if (only->container.empty()) {
      only->container = ref->container;
    }
  }
  return only;
}

std::string gpu_identity_labels(const agent::LiveSnapshot& snap, const agent::GpuLive& gpu) {
  std::string labels;
  append_label(labels, "gpu", std::to_string(gpu.device.index));
  append_label(labels, "uuid", gpu.device.uuid);
  append_label(labels, "model", gpu.device.name);
  append_label(labels, "hostname", snap.hostname);
  return labels;
}

std::string gpu_labels(const agent::LiveSnapshot& snap, const agent::GpuLive& gpu) {
  std::string labels = gpu_identity_labels(snap, gpu);
  if (const auto pod = single_pod_of_gpu(snap, gpu)) {
    append_label(labels, "namespace", pod->namespace_name);
    append_label(labels, "pod", pod->pod);
    if (!pod->container.empty()) append_label(labels, "container", pod->container);
  }
  return labels;
}

namespace {

// Under MIG, GPM is read per GPU instance (the sample's x_mig; whole-GPU GPM
// metrics are n/a then). Each instance's readings go into families of their own,
// gpulens_mig_<family>, with a gpu_instance label (dcgm-exporter's GPU_I_ID): in
// the GPU's own families they would be summed by the fleet's rules as if each
// instance were a whole GPU.
void render_mig_metrics(PromWriter& w, const agent::LiveSnapshot& snap) {
  for (const auto& f : sample_families()) {
    const std::string name = std::string("gpulens_mig_") + (f.name + std::strlen("gpulens_"));
    bool any = false;
    for (const auto& g : snap.gpus) {
      if (!g.sample || !g.sample->extra.is_object()) continue;
      const auto mig = g.sample->extra.find("x_mig");
      if (mig == g.sample->extra.end() || !mig->is_array()) continue;
      for (const auto& instance : *mig) {
        const auto id = instance.find("gpu_instance");
        if (!instance.is_object() || id == instance.end() || !id->is_number_integer()) continue;
        std::string labels = gpu_identity_labels(snap, g);
        append_label(labels, "gpu_instance", std::to_string(id->get<long long>()));
        for (const auto& m : f.members) {
          const auto v = instance.find(std::string(metric_info(m.metric).key));
          if (v == instance.end() || !v->is_number()) continue;
          if (!any) {
            w.family(name, f.type,
                     std::string(f.help) + "; one MIG GPU instance (label gpu_instance)");
            any = true;
          }
          const double value = scaled(v->get<double>(), m.scale);
          if (m.label != nullptr)
            w.sample(name, labels, m.label, m.value, value);
          else
            w.sample(name, labels, value);
        }
      }
    }
  }
}

}  // namespace

void render_gpu_metrics(std::string& out, const agent::LiveSnapshot& snap) {
  PromWriter w(out);
  std::vector<std::string> labels;
  for (const auto& g : snap.gpus) labels.push_back(gpu_labels(snap, g));

  w.family("gpulens_gpu_info", "gauge",
           "Always 1: the GPU's identity (labels driver and architecture)");
  for (std::size_t i = 0; i < snap.gpus.size(); ++i) {
    std::string l = labels[i];
    append_label(l, "driver", snap.driver);
    append_label(l, "architecture", snap.gpus[i].limits.architecture);
    w.sample("gpulens_gpu_info", l, 1);
  }
  for (const auto& f : sample_families()) {
    bool any = false;
    for (std::size_t i = 0; i < snap.gpus.size(); ++i) {
      const auto& s = snap.gpus[i].sample;
      if (!s) continue;
      for (const auto& m : f.members) {
        const auto v = s->values.get(m.metric);
        if (!v) continue;
        if (!any) w.family(f.name, f.type, f.help);
        any = true;
        if (m.label != nullptr)
          w.sample(f.name, labels[i], m.label, m.value, scaled(*v, m.scale));
        else
          w.sample(f.name, labels[i], scaled(*v, m.scale));
      }
    }
  }
  render_mig_metrics(w, snap);
  // Each known reason as its own 0/1 series, so alerts need no bit arithmetic.
  bool reasons_header = false;
  for (std::size_t i = 0; i < snap.gpus.size(); ++i) {
    const auto& s = snap.gpus[i].sample;
    const auto mask = s ? s->values.get(Metric::ClockEventReasons) : std::nullopt;
    if (!mask) continue;
    if (!reasons_header) {
      w.family("gpulens_clock_event_reason_active", "gauge",
               "1 while the clock event (throttle) reason is active");
      reasons_header = true;
    }
    const auto bits = static_cast<std::uint64_t>(*mask);
    for (const auto& r : decode_clock_reasons(~std::uint64_t{0} & 0x1ff)) {
      w.sample("gpulens_clock_event_reason_active", labels[i], "reason", r.id,
               (bits & r.bit) != 0 ? 1 : 0);
    }
  }
  // Allocation (Modal's first utilization) needs only "is anything running":
  // a count per GPU, not a series per process.
  bool procs_header = false;
  for (std::size_t i = 0; i < snap.gpus.size(); ++i) {
    const auto& s = snap.gpus[i].sample;
    if (!s || !s->procs) continue;  // processes not sampled: absent, not 0
    if (!procs_header) {
      w.family("gpulens_gpu_processes", "gauge", "Processes holding a context on the GPU");
      procs_header = true;
    }
    w.sample("gpulens_gpu_processes", labels[i], static_cast<double>(s->procs->size()));
  }
  for (const auto& fact : kDeviceFacts) {
    bool any = false;
    for (std::size_t i = 0; i < snap.gpus.size(); ++i) {
      const auto v = fact.get(snap.gpus[i]);
      if (!v) continue;
      if (!any) w.family(fact.name, "gauge", fact.help);
      any = true;
      w.sample(fact.name, labels[i], *v);
    }
  }
  if (snap.host_cpu_pct) {
    w.family("gpulens_host_cpu_busy_ratio", "gauge",
             "Whole-host CPU busy over the last interval (1 = all cores)");
    w.sample("gpulens_host_cpu_busy_ratio", render_labels({{"hostname", snap.hostname}}),
             scaled(*snap.host_cpu_pct, kPercent));
  }
}

void render_diagnosis_metrics(std::string& out, const agent::LiveSnapshot& snap) {
  PromWriter w(out);
  std::vector<std::string> labels;
  for (const auto& g : snap.gpus) labels.push_back(gpu_labels(snap, g));
  w.family("gpulens_diagnosis_state", "gauge",
           "1 for the GPU's diagnosed state over the last window, 0 for the others");
  for (std::size_t i = 0; i < snap.gpus.size(); ++i) {
    for (diagnosis::GpuState s : diagnosis::all_states()) {
      const auto id = diagnosis::state_id(s);
      w.sample("gpulens_diagnosis_state", labels[i], "state", id, snap.gpus[i].state == id ? 1 : 0);
    }
  }
  w.family("gpulens_diagnosis_confidence_ratio", "gauge", "Confidence of the diagnosed state");
  for (std::size_t i = 0; i < snap.gpus.size(); ++i)
    w.sample("gpulens_diagnosis_confidence_ratio", labels[i], snap.gpus[i].confidence);
  w.family("gpulens_diagnosis_throttled", "gauge",
           "1 while power or thermal limits hold the clocks down");
  for (std::size_t i = 0; i < snap.gpus.size(); ++i)
    w.sample("gpulens_diagnosis_throttled", labels[i], snap.gpus[i].throttled ? 1 : 0);
  bool any = false;
  for (std::size_t i = 0; i < snap.gpus.size(); ++i) {
    const auto& e = snap.gpus[i].efficiency;
    if (!e) continue;
    if (!any)
      w.family("gpulens_efficiency_ratio", "gauge",
               "SM activity over GPU utilization (Packet.ai's efficiency score / 100), over the "
               "diagnosis window; absent while the GPU is idle");
    any = true;
    w.sample("gpulens_efficiency_ratio", labels[i], scaled(*e, kPercent));
  }
  w.family("gpulens_xid_errors_total", "counter", "XID errors reported since the agent started");
  for (std::size_t i = 0; i < snap.gpus.size(); ++i)
    w.sample("gpulens_xid_errors_total", labels[i], static_cast<double>(snap.gpus[i].xid_count));
  if (!snap.firing.empty()) {
    w.family("gpulens_alert_firing", "gauge",
             "1 for each firing alert (labels rule and severity); absent when none fires");
    std::set<std::string> written;  // XIDs of one kind fire per code: one series each
    for (const auto& f : snap.firing) {
      const agent::GpuLive* g = nullptr;
      for (const auto& candidate : snap.gpus) {
        if (candidate.device.index == f.alert.gpu) g = &candidate;
      }
      std::string l =
          g != nullptr
              ? gpu_labels(snap, *g)
              : render_labels({{"gpu", std::to_string(f.alert.gpu)}, {"hostname", snap.hostname}});
      append_label(l, "rule", f.alert.rule);
      append_label(l, "severity", diagnosis::severity_id(f.alert.severity));
      if (written.insert(l).second) w.sample("gpulens_alert_firing", l, 1);
    }
  }
}

void render_price_metrics(std::string& out, const agent::LiveSnapshot& snap,
                          const ExpositionOptions& options) {
  if (!options.price_of) return;
  PromWriter w(out);
  bool family = false;
  for (const auto& g : snap.gpus) {
    const auto price = options.price_of(g.device.name);
    if (!price) continue;
    if (!family) {
      w.family("gpulens_gpu_price_per_hour", "gauge",
               "What one hour of this GPU costs (the config's price_per_gpu_hour, else the "
               "price table by GPU model; label currency)");
      family = true;
    }
    std::string l = gpu_identity_labels(snap, g);
    append_label(l, "currency", price->currency);
    w.sample("gpulens_gpu_price_per_hour", l, price->per_hour);
  }
}

std::string render_metrics(const agent::LiveSnapshot& snap, const ExpositionOptions& options,
                           const SelfStats& self) {
  std::string out;
  out.reserve(64 * 1024);
  if (options.native) {
    render_gpu_metrics(out, snap);
    render_diagnosis_metrics(out, snap);
    render_price_metrics(out, snap, options);
    render_allocation_metrics(out, snap);
    if (options.process_metrics) render_process_metrics(out, snap);
    if (self.kernel_series) render_kernel_metrics(out, snap, *self.kernel_series);
  }
  if (options.dcgm) render_dcgm_metrics(out, snap);
  render_self_metrics(out, snap, self);
  return out;
}

}  // namespace gpulens::exposition
