// SPDX-License-Identifier: Apache-2.0
// gpulens_nvml_probe: checks the live NVML/GPM collector on a real GPU. Prints the
// probed devices (a gpu-trace header line), then N samples per GPU as JSON lines with
// the trace's metric keys, any XID/lost events, and the mean collection cost per tick.
//
//   gpulens_nvml_probe [--count N] [--interval S] [--gpus 0,1] [--no-gpm] [--no-procs]
//                      [--energy-refresh S] [--call-costs REPS] [--memory-steps]
//                      [--gpm-fanout ROUNDS] [--no-dcgm-fields] [--link-errors-refresh S]
//
// --call-costs times each per-tick NVML call on GPU 0 directly (REPS calls each), to
// keep the cost figures in docs/nvml-facts.md honest on new drivers.
// --no-dcgm-fields leaves out dcgm-exporter's fields beyond the classic set (encoder,
// decoder, remapped rows, PCIe replays, NVLink errors) and --link-errors-refresh sets
// how often the PCIe replay counter is read and an NVLink error pass begins (defaults
// 30 and 300 s; 0: every tick, and passes back to back), so that the summary's classic_ms tells
// what those fields cost per tick (bench/dcgm_fields/run.sh).
// --gpm-fanout takes a fresh GPM sample pair (SampleGet + MetricsGet of 15
// metrics, 100 ms apart, as the sampler does) on every GPU, ROUNDS times in each of
// three ways: the first GPU alone; all GPUs one after another on one thread; all
// at once, one thread per GPU (the sampler's way). --gpus limits it to those GPUs.
// It prints the driver's CPU per GPU for each, to tell a per-GPU cost that grows
// with the GPU count from one that grows only when the calls overlap (a lock).
// --memory-steps makes the NVML calls the collector makes, one kind at a time, and
// prints the resident memory after each and whether libcuda has been mapped, so that
// NVML's own footprint can be told from gpulens'.
#include <fcntl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/json_format.hpp"
#include "core/trace_reader.hpp"
#include "nvml_probe/gpm_costs.hpp"
#include "nvml_probe/timing.hpp"
#include "sources/nvml/nvml_collector.hpp"

namespace {

using namespace gpulens;
using namespace gpulens::probe;

struct Args {
  bool memory_steps = false;
  int call_cost_reps = 0;
  int gpm_fanout_rounds = 0;
  int count = 5;
  double interval_s = 1.0;
  sources::NvmlOptions nvml;
};

int usage(const char* why) {
  std::fprintf(stderr,
               "gpulens_nvml_probe: %s\nusage: gpulens_nvml_probe [--count N] [--interval S] "
               "[--gpus 0,1] [--no-gpm] [--no-procs] [--energy-refresh S] [--call-costs REPS]\n"
               "       [--memory-steps] [--gpm-fanout ROUNDS] [--no-dcgm-fields] "
               "[--link-errors-refresh S]\n",
               why);
  return 2;
}

bool parse(int argc, char** argv, Args& args) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--count" && has_value) {
      args.count = std::atoi(argv[++i]);
    } else if (arg == "--interval" && has_value) {
      args.interval_s = std::atof(argv[++i]);
    } else if (arg == "--energy-refresh" && has_value) {
      args.nvml.energy_refresh_s = std::atof(argv[++i]);
    } else if (arg == "--link-errors-refresh" && has_value) {
      args.nvml.link_errors_refresh_s = std::atof(argv[++i]);
      args.nvml.nvlink_errors_refresh_s = args.nvml.link_errors_refresh_s;
    } else if (arg == "--no-dcgm-fields") {
      args.nvml.dcgm_fields = false;
    } else if (arg == "--gpus" && has_value) {
      const std::string list = argv[++i];
      std::size_t start = 0;
      while (start <= list.size()) {
        const std::size_t comma = std::min(list.find(',', start), list.size());
        if (comma > start) args.nvml.gpus.push_back(std::atoi(list.substr(start, comma).c_str()));
        start = comma + 1;
      }
    } else if (arg == "--call-costs" && has_value) {
      args.call_cost_reps = std::atoi(argv[++i]);
    } else if (arg == "--gpm-fanout" && has_value) {
      args.gpm_fanout_rounds = std::atoi(argv[++i]);
    } else if (arg == "--memory-steps") {
      args.memory_steps = true;
    } else if (arg == "--no-gpm") {
      args.nvml.gpm = false;
    } else if (arg == "--no-procs") {
      args.nvml.processes = false;
    } else {
      return false;
    }
  }
  return args.count >= 0 && args.interval_s >= 0;
}

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

void print_events(sources::GpuCollector& collector) {
  for (const auto& e : collector.poll_events()) {
    const nlohmann::json j = {{"t", e.t},
                              {"event", e.kind == sources::DeviceEvent::Kind::Xid ? "xid" : "lost"},
                              {"gpu", e.gpu},
                              {"xid", e.xid},
                              {"detail", e.detail}};
    std::printf("%s\n", j.dump().c_str());
  }
}

// What reading a host file costs (open, read all, close): the kernel generates
// /proc files on each read, so their cost is mostly system time.
void time_file_reads(int reps) {
  std::vector<char> buffer(1 << 16);
  for (const char* path : {"/proc/stat", "/proc/meminfo", "/proc/schedstat", "/proc/loadavg",
                           "/sys/fs/cgroup/cpu.stat"}) {
    std::size_t bytes = 0;
    time_call(path, reps, [&] {
      const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
      if (fd < 0) return sources::nvml::Return::NotFound;
      bytes = 0;
      for (ssize_t n; (n = ::read(fd, buffer.data(), buffer.size())) > 0;) {
        bytes += static_cast<std::size_t>(n);
      }
      ::close(fd);
      return sources::nvml::Return::Success;
    });
    std::printf("{\"file\": \"%s\", \"bytes\": %zu}\n", path, bytes);
  }
}

// The NVLink error counters two ways: every active link and counter one call at a
// time (a refresh as the collector made it), and the four totals over all links in
// one nvmlDeviceGetFieldValues call. On an NVLink H200 one per-link call costs about
// 0.7 ms of driver time, so the refresh is timed a few times only.
void time_nvlink_error_reads(const sources::NvmlApi& api, sources::nvml::Device dev, int reps) {
  std::vector<unsigned> active;
  for (unsigned link = 0;
       api.deviceGetNvLinkState != nullptr && link < sources::nvml::kNvlinkMaxLinks; ++link) {
    int state = 0;
    if (api.deviceGetNvLinkState(dev, link, &state) == sources::nvml::Return::Success &&
        state == sources::nvml::kFeatureEnabled) {
      active.push_back(link);
    }
  }
  std::printf("{\"nvlinks_active\": %zu}\n", active.size());
  const std::string every = "nvmlDeviceGetNvLinkErrorCounter(" + std::to_string(active.size()) +
                            " active links x 4 counters)";
  if (!active.empty()) {
    time_nvml_call(every.c_str(), api.deviceGetNvLinkErrorCounter, std::min(reps, 3), [&] {
      sources::nvml::Return last = sources::nvml::Return::Success;
      unsigned long long value = 0;
      for (const unsigned link : active) {
        for (const unsigned counter :
             {sources::nvml::kNvlinkErrorDlReplay, sources::nvml::kNvlinkErrorDlRecovery,
              sources::nvml::kNvlinkErrorDlCrcFlit, sources::nvml::kNvlinkErrorDlCrcData}) {
          last = api.deviceGetNvLinkErrorCounter(dev, link, counter, &value);
        }
      }
      return last;
    });
  }
  time_nvml_call("nvmlDeviceGetFieldValues(4 NVLink error totals)", api.deviceGetFieldValues,
                 std::min(reps, 50), [&] {
                   std::array<sources::nvml::FieldValue, 4> f{};
                   const std::array<unsigned, 4> ids = {sources::nvml::kFieldNvlinkReplayTotal,
                                                        sources::nvml::kFieldNvlinkRecoveryTotal,
                                                        sources::nvml::kFieldNvlinkCrcFlitTotal,
                                                        sources::nvml::kFieldNvlinkCrcDataTotal};
                   for (std::size_t k = 0; k < f.size(); ++k) f[k].fieldId = ids[k];
                   const sources::nvml::Return r =
                       api.deviceGetFieldValues(dev, static_cast<int>(f.size()), f.data());
                   if (r != sources::nvml::Return::Success) return r;
                   for (const auto& v : f) {
                     if (v.nvmlReturn != sources::nvml::Return::Success) return v.nvmlReturn;
                   }
                   return r;
                 });
  // Every active link's replay, recovery and CRC counters in one call (scopeId = link).
  std::vector<sources::nvml::FieldValue> per_link;
  for (const unsigned link : active) {
    for (const unsigned field :
         {sources::nvml::kFieldNvlinkDlReplay, sources::nvml::kFieldNvlinkDlRecovery,
          sources::nvml::kFieldNvlinkDlCrc}) {
      sources::nvml::FieldValue f{};
      f.fieldId = field;
      f.scopeId = link;
      per_link.push_back(f);
    }
  }
  if (!per_link.empty()) {
    const std::string batch = "nvmlDeviceGetFieldValues(" + std::to_string(per_link.size()) +
                              " NVLink DL error fields, scope = link)";
    time_nvml_call(batch.c_str(), api.deviceGetFieldValues, std::min(reps, 10), [&] {
      const sources::nvml::Return r =
          api.deviceGetFieldValues(dev, static_cast<int>(per_link.size()), per_link.data());
      if (r != sources::nvml::Return::Success) return r;
      for (const auto& v : per_link) {
        if (v.nvmlReturn != sources::nvml::Return::Success) return v.nvmlReturn;
      }
      return r;
    });
    std::array<unsigned long long, 3> dl{};
    for (std::size_t k = 0; k < per_link.size(); ++k) {
      if (per_link[k].nvmlReturn == sources::nvml::Return::Success) {
        dl[k % 3] += per_link[k].value.ullVal;
      }
    }
    const nlohmann::json j = {{"nvlink_dl_fields_replay_recovery_crc", dl}};
    std::printf("%s\n", j.dump().c_str());
  }
  // Both ways' values, to show they count the same errors.
  nlohmann::json sums = nlohmann::json::array();
  nlohmann::json totals = nlohmann::json::array();
  const std::array<std::pair<unsigned, unsigned>, 4> pairs = {
      {{sources::nvml::kNvlinkErrorDlReplay, sources::nvml::kFieldNvlinkReplayTotal},
       {sources::nvml::kNvlinkErrorDlRecovery, sources::nvml::kFieldNvlinkRecoveryTotal},
       {sources::nvml::kNvlinkErrorDlCrcFlit, sources::nvml::kFieldNvlinkCrcFlitTotal},
       {sources::nvml::kNvlinkErrorDlCrcData, sources::nvml::kFieldNvlinkCrcDataTotal}}};
  for (const auto& [counter, field] : pairs) {
    unsigned long long sum = 0;
    for (const unsigned link : active) {
      unsigned long long value = 0;
      if (api.deviceGetNvLinkErrorCounter != nullptr &&
          api.deviceGetNvLinkErrorCounter(dev, link, counter, &value) ==
              sources::nvml::Return::Success) {
        sum += value;
      }
    }
    sums.push_back(sum);
    sources::nvml::FieldValue f{};
    f.fieldId = field;
    if (api.deviceGetFieldValues != nullptr &&
        api.deviceGetFieldValues(dev, 1, &f) == sources::nvml::Return::Success &&
        f.nvmlReturn == sources::nvml::Return::Success) {
      totals.push_back(f.value.ullVal);
    } else {
      totals.push_back(sources::nvml_error_name(f.nvmlReturn));
    }
  }
  const nlohmann::json j = {{"nvlink_error_sums", sums}, {"nvlink_error_totals", totals}};
  std::printf("%s\n", j.dump().c_str());
}

int call_costs(int reps) {
  time_file_reads(reps);
  auto loaded = sources::load_nvml_library();
  if (!loaded) {
    std::fprintf(stderr, "gpulens_nvml_probe: %s\n", loaded.error().message.c_str());
    return 1;
  }
  const sources::NvmlApi& api = *loaded;
  sources::nvml::Device dev = nullptr;
  if (api.init_v2() != sources::nvml::Return::Success ||
      api.deviceGetHandleByIndex_v2(0, &dev) != sources::nvml::Return::Success) {
    std::fprintf(stderr, "gpulens_nvml_probe: cannot open GPU 0\n");
    return 1;
  }
  unsigned u = 0;
  unsigned v = 0;
  unsigned long long ull = 0;
  int i = 0;
  time_nvml_call("nvmlDeviceGetUtilizationRates", api.deviceGetUtilizationRates, reps, [&] {
    sources::nvml::Utilization x{};
    return api.deviceGetUtilizationRates(dev, &x);
  });
  time_nvml_call("nvmlDeviceGetMemoryInfo_v2", api.deviceGetMemoryInfo_v2, reps, [&] {
    sources::nvml::Memory_v2 m{};
    m.version = sources::nvml::kMemoryV2Version;
    return api.deviceGetMemoryInfo_v2(dev, &m);
  });
  time_nvml_call("nvmlDeviceGetPowerUsage", api.deviceGetPowerUsage, reps,
                 [&] { return api.deviceGetPowerUsage(dev, &u); });
  time_nvml_call("nvmlDeviceGetTemperature", api.deviceGetTemperature, reps,
                 [&] { return api.deviceGetTemperature(dev, sources::nvml::kTemperatureGpu, &u); });
  time_nvml_call("nvmlDeviceGetFieldValues(MEMORY_TEMP)", api.deviceGetFieldValues, reps, [&] {
    sources::nvml::FieldValue f{};
    f.fieldId = sources::nvml::kFieldMemoryTemp;
    const sources::nvml::Return r = api.deviceGetFieldValues(dev, 1, &f);
    return r == sources::nvml::Return::Success ? f.nvmlReturn : r;
  });
  time_nvml_call("nvmlDeviceGetClockInfo(SM)", api.deviceGetClockInfo, reps,
                 [&] { return api.deviceGetClockInfo(dev, sources::nvml::kClockSm, &u); });
  time_nvml_call("nvmlDeviceGetCurrentClocksEventReasons", api.deviceGetCurrentClocksEventReasons,
                 reps, [&] { return api.deviceGetCurrentClocksEventReasons(dev, &ull); });
  time_nvml_call("nvmlDeviceGetPerformanceState", api.deviceGetPerformanceState, reps,
                 [&] { return api.deviceGetPerformanceState(dev, &i); });
  time_nvml_call("nvmlDeviceGetTotalEccErrors", api.deviceGetTotalEccErrors, reps, [&] {
    return api.deviceGetTotalEccErrors(dev, sources::nvml::kMemoryErrorCorrected,
                                       sources::nvml::kEccCounterVolatile, &ull);
  });
  time_nvml_call("nvmlDeviceGetEncoderUtilization", api.deviceGetEncoderUtilization, reps,
                 [&] { return api.deviceGetEncoderUtilization(dev, &u, &v); });
  time_nvml_call("nvmlDeviceGetDecoderUtilization", api.deviceGetDecoderUtilization, reps,
                 [&] { return api.deviceGetDecoderUtilization(dev, &u, &v); });
  time_nvml_call("nvmlDeviceGetRemappedRows", api.deviceGetRemappedRows, reps, [&] {
    unsigned rows[4] = {};
    return api.deviceGetRemappedRows(dev, &rows[0], &rows[1], &rows[2], &rows[3]);
  });
  time_nvml_call("nvmlDeviceGetPcieReplayCounter", api.deviceGetPcieReplayCounter,
                 std::min(reps, 50), [&] { return api.deviceGetPcieReplayCounter(dev, &u); });
  time_nvml_call("nvmlDeviceGetNvLinkErrorCounter(link 0, DL_REPLAY)",
                 api.deviceGetNvLinkErrorCounter, reps, [&] {
                   return api.deviceGetNvLinkErrorCounter(
                       dev, 0, sources::nvml::kNvlinkErrorDlReplay, &ull);
                 });
  time_nvlink_error_reads(api, dev, reps);
  time_nvml_call("nvmlDeviceGetTotalEnergyConsumption", api.deviceGetTotalEnergyConsumption,
                 std::min(reps, 5), [&] { return api.deviceGetTotalEnergyConsumption(dev, &ull); });
  std::vector<sources::nvml::ProcessInfo_v3> procs(256);
  time_nvml_call("nvmlDeviceGetComputeRunningProcesses_v3", api.deviceGetComputeRunningProcesses_v3,
                 reps, [&] {
                   auto n = static_cast<unsigned>(procs.size());
                   return api.deviceGetComputeRunningProcesses_v3(dev, &n, procs.data());
                 });
  time_nvml_call("nvmlDeviceGetGraphicsRunningProcesses_v3",
                 api.deviceGetGraphicsRunningProcesses_v3, reps, [&] {
                   auto n = static_cast<unsigned>(procs.size());
                   return api.deviceGetGraphicsRunningProcesses_v3(dev, &n, procs.data());
                 });
  std::vector<sources::nvml::ProcessUtilizationSample> util(1024);
  const auto since = static_cast<unsigned long long>((unix_now() - 1.0) * 1e6);
  time_nvml_call("nvmlDeviceGetProcessUtilization(last 1 s)", api.deviceGetProcessUtilization, reps,
                 [&] {
                   auto n = static_cast<unsigned>(util.size());
                   return api.deviceGetProcessUtilization(dev, util.data(), &n, since);
                 });
  sources::nvml::EventSet events = nullptr;
  if (api.has_events() && api.eventSetCreate(&events) == sources::nvml::Return::Success) {
    api.deviceRegisterEvents(dev, sources::nvml::kEventTypeXidCriticalError, events);
    time_call("nvmlEventSetWait_v2(timeout 0)", reps, [&] {
      sources::nvml::EventData data{};
      const sources::nvml::Return r = api.eventSetWait_v2(events, &data, 0);
      return r == sources::nvml::Return::Timeout ? sources::nvml::Return::Success : r;
    });
    api.eventSetFree(events);
  }
  if (api.has_gpm()) print_gpm_call_costs(api, dev, reps);
  api.shutdown();
  return 0;
}

// One line per step: resident memory (KiB) from /proc/self/status, the thread count,
// and whether NVML has mapped libcuda by then.
void print_memory(const char* step) {
  nlohmann::json j = {{"step", step}};
  std::FILE* status = std::fopen("/proc/self/status", "re");
  char line[256];
  while (status != nullptr && std::fgets(line, sizeof line, status) != nullptr) {
    for (const char* key : {"VmHWM", "VmRSS", "RssAnon", "RssFile", "Threads"}) {
      const std::size_t n = std::strlen(key);
      if (std::strncmp(line, key, n) == 0 && line[n] == ':') j[key] = std::atol(line + n + 1);
    }
  }
  if (status != nullptr) std::fclose(status);
  bool cuda = false;
  std::FILE* maps = std::fopen("/proc/self/maps", "re");
  while (maps != nullptr && std::fgets(line, sizeof line, maps) != nullptr) {
    cuda = cuda || std::strstr(line, "libcuda") != nullptr;
  }
  if (maps != nullptr) std::fclose(maps);
  j["libcuda_mapped"] = cuda;
  std::printf("%s\n", j.dump().c_str());
}

// The largest resident mappings at the end, with their sizes: which anonymous memory
// is a thread stack, a malloc arena or the driver's.
void print_largest_mappings() {
  std::FILE* smaps = std::fopen("/proc/self/smaps", "re");
  if (smaps == nullptr) return;
  struct Mapping {
    std::string head;
    long size_kib = 0;
    long rss_kib = 0;
  };
  std::vector<Mapping> all;
  char line[512];
  while (std::fgets(line, sizeof line, smaps) != nullptr) {
    unsigned long lo = 0;
    unsigned long hi = 0;
    if (std::sscanf(line, "%lx-%lx ", &lo, &hi) == 2) {  // a mapping's first line
      all.push_back({line, static_cast<long>((hi - lo) / 1024), 0});
      all.back().head.pop_back();  // the newline
    } else if (std::strncmp(line, "Rss:", 4) == 0 && !all.empty()) {
      all.back().rss_kib = std::atol(line + 4);
    }
  }
  std::fclose(smaps);
  std::sort(all.begin(), all.end(), [](auto& a, auto& b) { return a.rss_kib > b.rss_kib; });
  for (std::size_t i = 0; i < all.size() && all[i].rss_kib >= 128; ++i) {
    const nlohmann::json j = {
        {"mapping", all[i].head}, {"size_kib", all[i].size_kib}, {"rss_kib", all[i].rss_kib}};
    std::printf("%s\n", j.dump().c_str());
  }
}

// Calls an NVML function the loaded library may lack (NvmlApi leaves it null: an
// old driver, the test fake); the memory steps only need the calls that exist.
// (The arguments take the function's own parameter types, converted at the call.)
template <typename R, typename... Params>
void call_if(R (*fn)(Params...), std::type_identity_t<Params>... args) {
  if (fn != nullptr) fn(args...);
}

int memory_steps() {
  print_memory("start");
  auto loaded = sources::load_nvml_library();
  if (!loaded) {
    std::fprintf(stderr, "gpulens_nvml_probe: %s\n", loaded.error().message.c_str());
    return 1;
  }
  const sources::NvmlApi& api = *loaded;
  print_memory("dlopen libnvidia-ml");
  sources::nvml::Device dev = nullptr;
  if (api.init_v2() != sources::nvml::Return::Success) return 1;
  print_memory("nvmlInit_v2");
  if (api.deviceGetHandleByIndex_v2(0, &dev) != sources::nvml::Return::Success) return 1;
  print_memory("nvmlDeviceGetHandleByIndex_v2");
  char text[256];
  unsigned u = 0;
  unsigned u2 = 0;
  int i = 0;
  int i2 = 0;
  call_if(api.deviceGetName, dev, text, sizeof text);
  call_if(api.deviceGetUUID, dev, text, sizeof text);
  sources::nvml::PciInfo pci{};
  call_if(api.deviceGetPciInfo_v3, dev, &pci);
  call_if(api.deviceGetArchitecture, dev, &u);
  print_memory("name, UUID, PCI, architecture");
  call_if(api.deviceGetCudaComputeCapability, dev, &i, &i2);
  print_memory("nvmlDeviceGetCudaComputeCapability");
  sources::nvml::DeviceAttributes attributes{};
  call_if(api.deviceGetAttributes_v2, dev, &attributes);
  print_memory("nvmlDeviceGetAttributes_v2");
  call_if(api.deviceGetNumGpuCores, dev, &u);
  call_if(api.deviceGetEnforcedPowerLimit, dev, &u);
  call_if(api.deviceGetMaxClockInfo, dev, sources::nvml::kClockSm, &u);
  call_if(api.deviceGetMaxPcieLinkGeneration, dev, &u);
  call_if(api.deviceGetMaxPcieLinkWidth, dev, &u);
  call_if(api.deviceGetMigMode, dev, &u, &u2);
  call_if(api.deviceGetNvLinkState, dev, 0, &i);
  call_if(api.deviceGetEccMode, dev, &i, &i2);
  print_memory("cores, power limit, clocks, PCIe, MIG, NVLink, ECC mode");
  sources::nvml::GpmSupport support{};
  support.version = sources::nvml::kGpmSupportVersion;
  if (api.has_gpm()) api.gpmQueryDeviceSupport(dev, &support);
  print_memory("nvmlGpmQueryDeviceSupport");
  sources::nvml::EventSet events = nullptr;
  if (api.has_events() && api.eventSetCreate(&events) == sources::nvml::Return::Success) {
    call_if(api.deviceRegisterEvents, dev, sources::nvml::kEventTypeXidCriticalError, events);
  }
  print_memory("event set, XID registration");
  sources::nvml::Utilization util{};
  sources::nvml::Memory_v2 memory{};
  memory.version = sources::nvml::kMemoryV2Version;
  unsigned long long ull = 0;
  call_if(api.deviceGetUtilizationRates, dev, &util);
  call_if(api.deviceGetMemoryInfo_v2, dev, &memory);
  call_if(api.deviceGetPowerUsage, dev, &u);
  call_if(api.deviceGetTemperature, dev, sources::nvml::kTemperatureGpu, &u);
  call_if(api.deviceGetClockInfo, dev, sources::nvml::kClockSm, &u);
  call_if(api.deviceGetCurrentClocksEventReasons, dev, &ull);
  call_if(api.deviceGetPerformanceState, dev, &i);
  call_if(api.deviceGetTotalEccErrors, dev, sources::nvml::kMemoryErrorCorrected,
          sources::nvml::kEccCounterVolatile, &ull);
  print_memory("per-tick classic reads");
  call_if(api.deviceGetTotalEnergyConsumption, dev, &ull);
  print_memory("nvmlDeviceGetTotalEnergyConsumption");
  std::vector<sources::nvml::ProcessInfo_v3> procs(64);
  auto n = static_cast<unsigned>(procs.size());
  call_if(api.deviceGetComputeRunningProcesses_v3, dev, &n, procs.data());
  print_memory("nvmlDeviceGetComputeRunningProcesses_v3");
  std::vector<sources::nvml::ProcessUtilizationSample> shares(256);
  n = static_cast<unsigned>(shares.size());
  call_if(api.deviceGetProcessUtilization, dev, shares.data(), &n, 0);
  print_memory("nvmlDeviceGetProcessUtilization");
  if (api.has_gpm()) {
    sources::nvml::GpmSample a = nullptr;
    sources::nvml::GpmSample b = nullptr;
    api.gpmSampleAlloc(&a);
    api.gpmSampleAlloc(&b);
    print_memory("nvmlGpmSampleAlloc x2");
    api.gpmSampleGet(dev, a);
    print_memory("nvmlGpmSampleGet");
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    api.gpmSampleGet(dev, b);
    auto request = std::make_unique<sources::nvml::GpmMetricsGet>();
    request->version = sources::nvml::kGpmMetricsGetVersion;
    request->numMetrics = 1;
    request->sample1 = a;
    request->sample2 = b;
    request->metrics[0].metricId = 2;  // SM activity
    api.gpmMetricsGet(request.get());
    print_memory("nvmlGpmMetricsGet");
    api.gpmSampleFree(a);
    api.gpmSampleFree(b);
  }
  print_largest_mappings();
  if (events != nullptr) api.eventSetFree(events);
  api.shutdown();
  print_memory("nvmlShutdown");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  if (!parse(argc, argv, args)) return usage("bad arguments");
  if (args.call_cost_reps > 0) return call_costs(args.call_cost_reps);
  if (args.memory_steps) return memory_steps();
  if (args.gpm_fanout_rounds > 0) return gpm_fanout(args.gpm_fanout_rounds, args.nvml.gpus);

  const auto opened_at = std::chrono::steady_clock::now();
  auto opened = sources::open_nvml_collector(args.nvml);
  if (!opened) {
    std::fprintf(stderr, "gpulens_nvml_probe: %s\n", opened.error().message.c_str());
    return 1;
  }
  const double open_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - opened_at).count();
  sources::GpuCollector& collector = **opened;

  TraceHeader header;
  header.driver = collector.driver_version();
  header.interval_s = args.interval_s;
  header.devices = collector.devices();
  std::printf("%s\n", header_to_json(header).dump().c_str());

  const std::size_t n = collector.devices().size();
  std::vector<Sample> samples(n);
  std::vector<sources::CollectCost> costs(n);
  std::string line;
  auto next = std::chrono::steady_clock::now();
  for (int tick = 0; tick < args.count; ++tick) {
    next += std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double>(args.interval_s));
    std::this_thread::sleep_until(next);
    const double t = unix_now();
    // One thread per GPU, as the sampler does, so concurrent sampling is exercised.
    std::vector<std::thread> workers;
    for (std::size_t slot = 0; slot < n; ++slot) {
      workers.emplace_back([&, slot] {
        samples[slot].t = t;
        samples[slot].gpu = collector.devices()[slot].index;
        collector.sample(slot, samples[slot], costs[slot]);
      });
    }
    for (auto& w : workers) w.join();
    for (const auto& s : samples) {
      line.clear();
      append_sample_json(line, s);
      std::printf("%s\n", line.c_str());
    }
    print_events(collector);
    std::fflush(stdout);
  }

  sources::CollectCost total;
  for (const auto& c : costs) total += c;
  const double per = args.count > 0 && n > 0 ? 1000.0 / (args.count * static_cast<double>(n)) : 0;
  rusage usage_now{};
  getrusage(RUSAGE_SELF, &usage_now);
  const nlohmann::json summary = {
      {"summary", "mean CPU ms per device per tick"},
      {"ticks", args.count},
      {"devices", n},
      // classic_ms holds the slow counters too (bench/dcgm_fields/run.sh compares it
      // with and without them); slow_ms is their share.
      {"classic_ms", (total.classic_s + total.slow_s) * per},
      {"slow_ms", total.slow_s * per},
      {"gpm_ms", total.gpm_s * per},
      {"procs_ms", total.procs_s * per},
      {"total_ms", (total.classic_s + total.slow_s + total.gpm_s + total.procs_s) * per},
      {"open_s", open_s},
      {"max_rss_mib", static_cast<double>(usage_now.ru_maxrss) / 1024.0}};
  std::printf("%s\n", summary.dump().c_str());
  return 0;
}
