// SPDX-License-Identifier: Apache-2.0
#include "sources/dcgm/dcgm_profiler.hpp"

#include <fmt/format.h>
#include <pthread.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <utility>

#include "core/clock.hpp"
#include "sources/dcgm/dcgm_fields.hpp"

namespace gpulens::sources {
namespace {

// DCGM_FV_FLAG_LIVE_DATA (structs.h:2204): read from the driver, not DCGM's cache;
// used once per session for the UUIDs, which nothing watches.
constexpr unsigned kDcgmFlagLiveData = 1;

std::string dcgm_watch_failure(dcgm::Return r, const DcgmApi& api) {
  const std::string what = dcgm_error_text(r, api);
  switch (r) {
    case dcgm::Return::RequiresRoot:
      return "DCGM profiles only when its host engine runs as root (" + what + ")";
    case dcgm::Return::InUse:
      return "another profiler holds the GPU's counters (Nsight Compute or Systems, or a "
             "profiling session of DCGM's own): " +
             what;
    case dcgm::Return::ProfilingNotSupported:
      return "DCGM does not profile this GPU (" + what +
             "): profiling needs a data-centre GPU of Volta or newer";
    case dcgm::Return::ModuleNotLoaded:
      return "the host engine's profiling module is not loaded (" + what + ")";
    case dcgm::Return::InsufficientDriverVersion:
      return "the NVIDIA driver is too old for this DCGM's profiling (" + what + ")";
    default:
      return "dcgmWatchFields refused the profiling fields: " + what;
  }
}

std::string dcgm_metric_keys(const std::vector<unsigned short>& fields) {
  std::string keys;
  for (unsigned short f : fields) {
    if (const auto* m = dcgm::find_mapping(f)) {
      if (!keys.empty()) keys += ", ";
      keys += metric_info(m->metric).key;
    }
  }
  return keys;
}

}  // namespace

Result<DcgmOptions> parse_dcgm_option(const std::string& text) {
  DcgmOptions options;
  if (text == "auto") return options;
  if (text == "off") {
    options.mode = DcgmOptions::Mode::Off;
    return options;
  }
  if (text == "embedded") {
    options.mode = DcgmOptions::Mode::Embedded;
    options.address = "embedded";
    return options;
  }
  if (text.empty() || text.size() > 255 ||
      std::any_of(text.begin(), text.end(), [](unsigned char c) { return c <= ' ' || c > '~'; })) {
    return Error{"--dcgm: expected auto, off, embedded, HOST[:PORT] or a socket path, got '" +
                 text + "'"};
  }
  options.mode = DcgmOptions::Mode::Connect;
  options.address = text;
  return options;
}

DcgmProfiler::DcgmProfiler(const DcgmApi& api, std::vector<DcgmTarget> targets, DcgmOptions options)
    : api_(api),
      targets_(std::move(targets)),
      options_(std::move(options)),
      stale_after_s_(options_.stale_after_s > 0 ? options_.stale_after_s
                                                : std::max(3.0, 3 * options_.update_period_s)) {
  embedded_ = options_.mode == DcgmOptions::Mode::Embedded;
  status_.source = "dcgm";
  status_.state = "unavailable";
  status_.address = embedded_ ? "embedded" : options_.address;
  for (const auto& t : targets_) status_.gpus.push_back(t.gpu);
  poll();
}

DcgmProfiler::~DcgmProfiler() {
  {
    const std::lock_guard lock(stop_mutex_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  close_session();
  if (initialized_) api_.shutdown();
}

double DcgmProfiler::unix_now_s() const {
  return options_.unix_s ? options_.unix_s() : unix_now();
}

double DcgmProfiler::monotonic_now_s() const {
  return options_.monotonic_s ? options_.monotonic_s() : monotonic_now();
}

void DcgmProfiler::start() {
  if (thread_.joinable()) return;
  thread_ = std::thread([this] {
    // Named so that `record --stats` and top(1) show DCGM's reads apart.
    pthread_setname_np(pthread_self(), "gpulens-dcgm");
    std::unique_lock lock(stop_mutex_);
    const auto period = std::chrono::duration<double>(std::max(0.01, options_.poll_period_s));
    while (!stopping_) {
      if (stop_cv_.wait_for(lock, period, [&] { return stopping_; })) break;
      lock.unlock();
      poll();
      lock.lock();
    }
  });
}

void DcgmProfiler::poll() {
  if (!watching_) {
    if (monotonic_now_s() < next_attempt_) return;
    if (!open_session()) return;
  }
  read_values();
}

void DcgmProfiler::fail(const std::string& why) {
  const bool was_watching = watching_;
  close_session();
  backoff_s_ =
      backoff_s_ <= 0 ? options_.backoff_min_s : std::min(options_.backoff_max_s, backoff_s_ * 2);
  next_attempt_ = monotonic_now_s() + backoff_s_;
  const std::lock_guard lock(mutex_);
  if (was_watching) ++status_.lost;
  // "reconnecting" once it has read values: it had them and expects them back.
  status_.state = watched_once_ ? "reconnecting" : "unavailable";
  status_.detail = why;
  cache_.clear();
  watched_.clear();
}

bool DcgmProfiler::open_session() {
  if (!initialized_) {
    if (const dcgm::Return r = api_.init(); r != dcgm::Return::Ok) {
      fail("dcgmInit failed: " + dcgm_error_text(r, api_));
      return false;
    }
    initialized_ = true;
  }
  if (embedded_) {
    if (api_.startEmbedded == nullptr || api_.stopEmbedded == nullptr) {
      fail(api_.path + " lacks dcgmStartEmbedded: it cannot run an embedded host engine");
      return false;
    }
    if (const dcgm::Return r = api_.startEmbedded(dcgm::kOperationModeAuto, &handle_);
        r != dcgm::Return::Ok) {
      fail("cannot start an embedded host engine: " + dcgm_error_text(r, api_));
      return false;
    }
  } else {
    dcgm::ConnectV2Params_v2 params{};
    params.version = dcgm::kConnectV2ParamsVersion2;
    params.persistAfterDisconnect = 0;  // our watches end with the connection
    params.timeoutMs =
        static_cast<unsigned>(std::clamp(options_.connect_timeout_s, 0.01, 60.0) * 1000.0);
    params.addressIsUnixSocket = options_.address.starts_with('/') ? 1 : 0;
    const dcgm::Return r = api_.connect_v2(options_.address.c_str(), &params, &handle_);
    if (r == dcgm::Return::VerMismatch) {
      fail("libdcgm and the host engine at " + options_.address +
           " are of different DCGM versions (" + dcgm_error_text(r, api_) +
           "): use the libdcgm of the host engine's DCGM");
      return false;
    }
    if (r != dcgm::Return::Ok) {
      fail("no DCGM host engine answers at " + options_.address + " (" + dcgm_error_text(r, api_) +
           ")");
      return false;
    }
  }
  connected_ = true;
  {
    const std::lock_guard lock(mutex_);
    ++status_.sessions;
  }

  std::array<unsigned, dcgm::kMaxNumDevices> ids{};
  int count = 0;
  if (const dcgm::Return r = api_.getAllSupportedDevices(handle_, ids.data(), &count);
      r != dcgm::Return::Ok) {
    fail("dcgmGetAllSupportedDevices failed: " + dcgm_error_text(r, api_));
    return false;
  }
  count = std::clamp(count, 0, dcgm::kMaxNumDevices);

  // DCGM numbers GPUs its own way (its host engine may see more GPUs than this
  // container): match them to NVML's by UUID.
  std::vector<dcgm::GroupEntityPair> all;
  for (int i = 0; i < count; ++i) all.push_back({dcgm::EntityGroup::Gpu, ids[i]});
  std::vector<dcgm::FieldValue_v2> uuids(all.size());
  unsigned short uuid_field = dcgm::kFieldGpuUuid;
  if (!all.empty()) {
    const dcgm::Return r =
        api_.entitiesGetLatestValues(handle_, all.data(), static_cast<unsigned>(all.size()),
                                     &uuid_field, 1, kDcgmFlagLiveData, uuids.data());
    if (r != dcgm::Return::Ok) {
      fail("cannot read the host engine's GPU UUIDs: " + dcgm_error_text(r, api_));
      return false;
    }
  }
  entities_.clear();
  gpu_of_entity_.clear();
  std::vector<std::string> notes;
  for (const auto& target : targets_) {
    bool found = false;
    for (const auto& v : uuids) {
      if (v.status != dcgm::code(dcgm::Return::Ok) || v.fieldType != dcgm::kFieldTypeString)
        continue;
      const std::string uuid(v.value.str, strnlen(v.value.str, dcgm::kMaxStrLength));
      if (uuid == target.uuid) {
        entities_.push_back({dcgm::EntityGroup::Gpu, v.entityId});
        gpu_of_entity_[v.entityId] = target.gpu;
        found = true;
        break;
      }
    }
    if (!found) {
      notes.push_back("GPU " + std::to_string(target.gpu) + " (" + target.uuid +
                      ") is not among the host engine's GPUs");
    }
  }
  if (entities_.empty()) {
    fail("the host engine sees none of the GPUs that lack GPM");
    return false;
  }

  if (const dcgm::Return r = api_.groupCreate(handle_, dcgm::kGroupEmpty, "gpulens", &group_);
      r != dcgm::Return::Ok) {
    fail("dcgmGroupCreate failed: " + dcgm_error_text(r, api_));
    return false;
  }
  for (const auto& e : entities_) {
    if (const dcgm::Return r = api_.groupAddDevice(handle_, group_, e.entityId);
        r != dcgm::Return::Ok) {
      fail("dcgmGroupAddDevice failed: " + dcgm_error_text(r, api_));
      return false;
    }
  }

  // Every field at once first; a generation that cannot read them in one pass gets
  // the four of the first pass (SM, occupancy, tensor, DRAM) and says what it lacks.
  const auto update_us =
      static_cast<long long>(std::clamp(options_.update_period_s, 0.1, 60.0) * 1e6);
  const double keep_s = std::max(10.0, 4 * options_.update_period_s);
  std::vector<unsigned short> wanted;
  for (const auto& m : dcgm::kFieldMappings) wanted.push_back(m.field);
  dcgm::Return watched = dcgm::Return::Ok;
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (const dcgm::Return r = api_.fieldGroupCreate(
            handle_, static_cast<int>(wanted.size()), wanted.data(),
            attempt == 0 ? "gpulens_prof" : "gpulens_prof_core", &field_group_);
        r != dcgm::Return::Ok) {
      fail("dcgmFieldGroupCreate failed: " + dcgm_error_text(r, api_));
      return false;
    }
    watched = api_.watchFields(handle_, group_, field_group_, update_us, keep_s, 4);
    if (watched != dcgm::Return::ProfilingMultiPass || attempt == 1) break;
    std::vector<unsigned short> core;
    std::vector<unsigned short> dropped;
    for (const auto& m : dcgm::kFieldMappings) (m.core ? core : dropped).push_back(m.field);
    notes.push_back("not read from DCGM: " + dcgm_metric_keys(dropped) +
                    " (DCGM cannot read them in one pass with the rest on this GPU: " +
                    dcgm_error_name(dcgm::Return::ProfilingMultiPass) + ")");
    api_.fieldGroupDestroy(handle_, field_group_);
    field_group_ = 0;
    wanted = std::move(core);
  }
  if (watched != dcgm::Return::Ok) {
    fail(dcgm_watch_failure(watched, api_));
    return false;
  }
  watching_ = true;
  watched_once_ = true;
  fields_ = wanted;
  values_buffer_.assign(entities_.size() * fields_.size(), dcgm::FieldValue_v2{});
  backoff_s_ = 0;
  std::vector<Metric> metrics;
  for (unsigned short f : fields_) metrics.push_back(dcgm::find_mapping(f)->metric);
  const std::lock_guard lock(mutex_);
  status_.state = "watching";
  status_.detail.clear();
  status_.notes = std::move(notes);
  watched_.clear();
  for (const auto& [entity, gpu] : gpu_of_entity_) watched_[gpu] = metrics;
  return true;
}

void DcgmProfiler::close_session() {
  // The engine may be gone: every call here may fail, and nothing depends on it.
  if (connected_) {
    if (watching_) api_.unwatchFields(handle_, group_, field_group_);
    if (field_group_ != 0) api_.fieldGroupDestroy(handle_, field_group_);
    if (group_ != 0) api_.groupDestroy(handle_, group_);
    if (embedded_) {
      api_.stopEmbedded(handle_);
    } else {
      api_.disconnect(handle_);
    }
  }
  connected_ = false;
  watching_ = false;
  field_group_ = 0;
  group_ = 0;
  handle_ = 0;
}

void DcgmProfiler::read_values() {
  for (auto& v : values_buffer_) {
    v.status = dcgm::code(dcgm::Return::NoData);  // an entry DCGM leaves unfilled reads absent
    v.fieldType = 0;
  }
  const dcgm::Return r = api_.entitiesGetLatestValues(
      handle_, entities_.data(), static_cast<unsigned>(entities_.size()), fields_.data(),
      static_cast<unsigned>(fields_.size()), 0, values_buffer_.data());
  if (r != dcgm::Return::Ok) {
    fail("the host engine stopped answering (" + dcgm_error_text(r, api_) +
         "): readings absent until it is back");
    return;
  }
  const double now = unix_now_s();
  std::map<int, std::map<Metric, Cached>> fresh;
  std::uint64_t blank = 0;
  std::uint64_t stale = 0;
  int refusal = dcgm::code(dcgm::Return::Ok);
  for (const auto& v : values_buffer_) {
    const auto gpu = gpu_of_entity_.find(v.entityId);
    const auto* mapping = dcgm::find_mapping(v.fieldId);
    if (gpu == gpu_of_entity_.end() || mapping == nullptr) continue;
    const auto value = dcgm::convert_value(*mapping, v);
    if (!value) {
      ++blank;
      // DCGM_ST_NO_DATA is "not sampled yet" (the first round after a watch): no news.
      if (v.status != dcgm::code(dcgm::Return::Ok) &&
          v.status != dcgm::code(dcgm::Return::NoData)) {
        refusal = v.status;
      }
      continue;
    }
    const double t = static_cast<double>(v.ts) / 1e6;
    if (now - t > stale_after_s_) {
      ++stale;
      continue;
    }
    fresh[gpu->second][mapping->metric] = Cached{*value, t};
  }
  const std::lock_guard lock(mutex_);
  cache_ = std::move(fresh);
  status_.blank_values += blank;
  status_.stale_values += stale;
  if (cache_.empty() && refusal != dcgm::code(dcgm::Return::Ok)) {
    status_.detail =
        "DCGM returns no values: " + dcgm_error_text(static_cast<dcgm::Return>(refusal), api_);
  } else if (cache_.empty() && stale > 0) {
    status_.detail = fmt::format(
        "DCGM's values are stale (older than {:g} s): is the host engine still sampling?",
        stale_after_s_);
  } else {
    status_.detail.clear();
  }
}

MetricValues DcgmProfiler::latest(int gpu) const {
  MetricValues values;
  const double now = unix_now_s();
  const std::lock_guard lock(mutex_);
  const auto it = cache_.find(gpu);
  if (it == cache_.end()) return values;
  for (const auto& [metric, cached] : it->second) {
    // Read again against now: a poll thread stuck in DCGM must not keep old values alive.
    if (now - cached.t <= stale_after_s_) values.set(metric, cached.value);
  }
  return values;
}

std::vector<Metric> DcgmProfiler::watched(int gpu) const {
  const std::lock_guard lock(mutex_);
  const auto it = watched_.find(gpu);
  return it == watched_.end() ? std::vector<Metric>{} : it->second;
}

ProfilerStatus DcgmProfiler::status() const {
  const std::lock_guard lock(mutex_);
  return status_;
}

}  // namespace gpulens::sources
