// SPDX-License-Identifier: Apache-2.0
// A libdcgm for machines without DCGM (tests/unit/sources/dcgm/): a host engine in
// memory whose GPUs, values and failures the test sets through the fake_dcgm_*
// functions below, which the test looks up in this same library with dlsym.
//
// The real binaries load it through LD_LIBRARY_PATH (tests/e2e/dcgm_fake.py); then
// the environment sets up the host engine:
//
//   GPULENS_FAKE_DCGM_GPUS   the engine's GPUs by UUID, comma-separated (DCGM id = position)
//   GPULENS_FAKE_DCGM_RATIO  every ratio field reads this (0..1), every byte-rate field
//                            this x 2^30 bytes/s, timestamped at the moment of the read
//
// On purpose this file includes nothing of gpulens: it declares DCGM's ABI again,
// in C style, from DCGM's dcgm_structs.h/dcgm_agent.h/dcgm_fields.h, so a layout
// error in src/sources/dcgm/dcgm_abi.hpp cannot hide in a header both share. The
// checks below are the fake's own: a caller whose struct sizes or version words
// disagree with these gets DCGM_ST_VER_MISMATCH, as from a real libdcgm.
#include <sys/time.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

extern "C" {

typedef int dcgm_return;  // dcgmReturn_t
typedef uintptr_t dcgm_handle;

struct fake_connect_params_v2 {  // dcgmConnectV2Params_v2
  unsigned int version;
  unsigned int persist_after_disconnect;
  unsigned int timeout_ms;
  unsigned int address_is_unix_socket;
};

struct fake_entity_pair {  // dcgmGroupEntityPair_t
  int entity_group;        // dcgm_field_entity_group_t, DCGM_FE_GPU = 1
  unsigned int entity_id;
};

struct fake_field_value_v2 {  // dcgmFieldValue_v2
  unsigned int version;
  int entity_group;
  unsigned int entity_id;
  unsigned short field_id;
  unsigned short field_type;
  int status;
  unsigned int unused;
  int64_t ts;
  union {
    int64_t i64;
    double dbl;
    char str[256];
    char blob[4096];
  } value;
};

}  // extern "C"

namespace {

constexpr dcgm_return kOk = 0;
constexpr dcgm_return kBadParam = -1;
constexpr dcgm_return kUninitialized = -10;
constexpr dcgm_return kVerMismatch = -12;
constexpr dcgm_return kNoData = -14;
constexpr dcgm_return kNotWatched = -16;
constexpr dcgm_return kConnectionNotValid = -21;
constexpr unsigned short kUuidField = 54;
constexpr int kFeGpu = 1;

// MAKE_DCGM_VERSION, written out: size in the low 24 bits, version above.
constexpr unsigned int kConnectV2Version = (2U << 24U) | 16U;
constexpr unsigned int kFieldValueV2Size = 4128;

struct FakeValue {
  unsigned int gpu;
  unsigned short field;
  unsigned short type;  // 'd' or 'i'
  double dbl;
  int64_t i64;
  int64_t ts;
  int status;
};

struct FakeEngine {
  std::mutex mutex;
  bool initialized = false;
  bool engine_up = true;
  dcgm_return connect_result = kOk;
  std::vector<dcgm_return> watch_results;  // consumed one per dcgmWatchFields; then kOk
  std::vector<std::string> uuids;          // DCGM gpu id = position
  std::vector<FakeValue> values;
  dcgm_handle next_handle = 100;
  dcgm_handle connected = 0;
  int connects = 0;
  int embedded_starts = 0;
  int embedded_stops = 0;
  int embedded_mode = 0;
  int watches = 0;
  int unwatches = 0;
  long long last_update_us = 0;
  int last_watch_field_count = 0;
  std::vector<unsigned int> group;
  std::string last_address;
  unsigned int last_timeout_ms = 0;
};

// From the environment (the e2e test); a unit test's fake_dcgm_reset clears it.
struct FakeFromEnvironment {
  bool on = false;
  double ratio = 0;
};
FakeFromEnvironment from_env;

void setup_from_environment(FakeEngine& e) {
  if (const char* gpus = std::getenv("GPULENS_FAKE_DCGM_GPUS"); gpus != nullptr) {
    const std::string list(gpus);
    for (std::size_t start = 0; start <= list.size();) {
      const std::size_t comma = std::min(list.find(',', start), list.size());
      if (comma > start) e.uuids.push_back(list.substr(start, comma - start));
      start = comma + 1;
    }
  }
  if (const char* ratio = std::getenv("GPULENS_FAKE_DCGM_RATIO"); ratio != nullptr) {
    from_env.on = true;
    from_env.ratio = std::strtod(ratio, nullptr);
  }
}

FakeEngine& engine() {
  static FakeEngine e;
  static const bool set_up = (setup_from_environment(e), true);
  (void)set_up;
  return e;
}

int64_t now_us() {
  timeval tv{};
  gettimeofday(&tv, nullptr);
  return static_cast<int64_t>(tv.tv_sec) * 1000000 + tv.tv_usec;
}

}  // namespace

extern "C" {

// --- What the test drives -------------------------------------------------------

__attribute__((visibility("default"))) void fake_dcgm_reset() {
  FakeEngine& e = engine();
  const std::lock_guard lock(e.mutex);
  e.initialized = false;
  e.engine_up = true;
  e.connect_result = kOk;
  e.watch_results.clear();
  e.uuids.clear();
  e.values.clear();
  e.connected = 0;
  e.connects = e.watches = e.unwatches = 0;
  e.embedded_starts = e.embedded_stops = e.embedded_mode = 0;
  e.last_update_us = 0;
  e.last_watch_field_count = 0;
  e.group.clear();
  e.last_address.clear();
  e.last_timeout_ms = 0;
  from_env.on = false;
}

__attribute__((visibility("default"))) void fake_dcgm_add_gpu(const char* uuid) {
  FakeEngine& e = engine();
  const std::lock_guard lock(e.mutex);
  e.uuids.emplace_back(uuid);
}

// A double value (the ratios); status other than 0 makes it an error entry.
__attribute__((visibility("default"))) void fake_dcgm_set_double(unsigned int gpu,
                                                                 unsigned short field, double v,
                                                                 int64_t ts_us, int status) {
  FakeEngine& e = engine();
  const std::lock_guard lock(e.mutex);
  for (auto& fv : e.values) {
    if (fv.gpu == gpu && fv.field == field) {
      fv = FakeValue{gpu, field, 'd', v, 0, ts_us, status};
      return;
    }
  }
  e.values.push_back(FakeValue{gpu, field, 'd', v, 0, ts_us, status});
}

// An int64 value (the byte rates).
__attribute__((visibility("default"))) void fake_dcgm_set_int64(unsigned int gpu,
                                                                unsigned short field, int64_t v,
                                                                int64_t ts_us, int status) {
  FakeEngine& e = engine();
  const std::lock_guard lock(e.mutex);
  for (auto& fv : e.values) {
    if (fv.gpu == gpu && fv.field == field) {
      fv = FakeValue{gpu, field, 'i', 0, v, ts_us, status};
      return;
    }
  }
  e.values.push_back(FakeValue{gpu, field, 'i', 0, v, ts_us, status});
}

__attribute__((visibility("default"))) void fake_dcgm_set_connect_result(int r) {
  FakeEngine& e = engine();
  const std::lock_guard lock(e.mutex);
  e.connect_result = r;
}

// The next dcgmWatchFields calls return these, in order.
__attribute__((visibility("default"))) void fake_dcgm_push_watch_result(int r) {
  FakeEngine& e = engine();
  const std::lock_guard lock(e.mutex);
  e.watch_results.push_back(r);
}

// The host engine stops (0) or comes back (1): a stopped one drops its connection.
__attribute__((visibility("default"))) void fake_dcgm_set_engine_up(int up) {
  FakeEngine& e = engine();
  const std::lock_guard lock(e.mutex);
  e.engine_up = up != 0;
  if (!e.engine_up) e.connected = 0;
}

// 0 connects, 1 watches, 2 unwatches, 3 last update period (us), 4 fields last
// watched, 5 last connect timeout (ms), 6 1 while dcgmInit'ed, 7 embedded engines
// started, 8 stopped, 9 the last one's operation mode.
__attribute__((visibility("default"))) long long fake_dcgm_counter(int which) {
  FakeEngine& e = engine();
  const std::lock_guard lock(e.mutex);
  switch (which) {
    case 0:
      return e.connects;
    case 1:
      return e.watches;
    case 2:
      return e.unwatches;
    case 3:
      return e.last_update_us;
    case 4:
      return e.last_watch_field_count;
    case 5:
      return e.last_timeout_ms;
    case 6:
      return e.initialized ? 1 : 0;
    case 7:
      return e.embedded_starts;
    case 8:
      return e.embedded_stops;
    case 9:
      return e.embedded_mode;
    default:
      return -1;
  }
}

// --- DCGM's entry points (dcgm_agent.h) -----------------------------------------

__attribute__((visibility("default"))) dcgm_return dcgmInit() {
  FakeEngine& e = engine();
  const std::lock_guard lock(e.mutex);
  e.initialized = true;
  return kOk;
}

__attribute__((visibility("default"))) dcgm_return dcgmShutdown() {
  FakeEngine& e = engine();
  const std::lock_guard lock(e.mutex);
  e.initialized = false;
  e.connected = 0;
  return kOk;
}

__attribute__((visibility("default"))) dcgm_return dcgmConnect_v2(const char* address,
                                                                  fake_connect_params_v2* params,
                                                                  dcgm_handle* handle) {
  FakeEngine& e = engine();
  const std::lock_guard lock(e.mutex);
  if (!e.initialized) return kUninitialized;
  if (address == nullptr || params == nullptr || handle == nullptr) return kBadParam;
  if (params->version != kConnectV2Version) return kVerMismatch;
  e.last_address = address;
  e.last_timeout_ms = params->timeout_ms;
  if (!e.engine_up) return kConnectionNotValid;
  if (e.connect_result != kOk) return e.connect_result;
  ++e.connects;
  e.connected = e.next_handle++;
  *handle = e.connected;
  return kOk;
}

// dcgmStartEmbedded(dcgmOperationMode_t, dcgmHandle_t*): DCGM_OPERATION_MODE_AUTO = 1,
// DCGM_OPERATION_MODE_MANUAL = 2.
__attribute__((visibility("default"))) dcgm_return dcgmStartEmbedded(int mode,
                                                                     dcgm_handle* handle) {
  FakeEngine& e = engine();
  const std::lock_guard lock(e.mutex);
  if (!e.initialized) return kUninitialized;
  if (handle == nullptr || (mode != 1 && mode != 2)) return kBadParam;
  ++e.embedded_starts;
  e.embedded_mode = mode;
  e.connected = e.next_handle++;
  *handle = e.connected;
  return kOk;
}

__attribute__((visibility("default"))) dcgm_return dcgmStopEmbedded(dcgm_handle handle) {
  FakeEngine& e = engine();
  const std::lock_guard lock(e.mutex);
  if (handle != e.connected) return kBadParam;
  ++e.embedded_stops;
  e.connected = 0;
  return kOk;
}

__attribute__((visibility("default"))) dcgm_return dcgmDisconnect(dcgm_handle handle) {
  FakeEngine& e = engine();
  const std::lock_guard lock(e.mutex);
  if (handle != e.connected) return kConnectionNotValid;
  e.connected = 0;
  return kOk;
}

__attribute__((visibility("default"))) dcgm_return dcgmGetAllSupportedDevices(dcgm_handle handle,
                                                                              unsigned int* ids,
                                                                              int* count) {
  FakeEngine& e = engine();
  const std::lock_guard lock(e.mutex);
  if (!e.engine_up || handle != e.connected) return kConnectionNotValid;
  for (std::size_t i = 0; i < e.uuids.size() && i < 32; ++i) ids[i] = static_cast<unsigned>(i);
  *count = static_cast<int>(e.uuids.size() < 32 ? e.uuids.size() : 32);
  return kOk;
}

__attribute__((visibility("default"))) dcgm_return dcgmGroupCreate(dcgm_handle handle, int type,
                                                                   const char* /*name*/,
                                                                   uintptr_t* group) {
  FakeEngine& e = engine();
  const std::lock_guard lock(e.mutex);
  if (!e.engine_up || handle != e.connected) return kConnectionNotValid;
  if (type != 1) return kBadParam;  // gpulens asks for DCGM_GROUP_EMPTY
  e.group.clear();
  *group = 7;
  return kOk;
}

__attribute__((visibility("default"))) dcgm_return dcgmGroupDestroy(dcgm_handle, uintptr_t) {
  return kOk;
}

__attribute__((visibility("default"))) dcgm_return dcgmGroupAddDevice(dcgm_handle handle,
                                                                      uintptr_t group,
                                                                      unsigned int gpu) {
  FakeEngine& e = engine();
  const std::lock_guard lock(e.mutex);
  if (!e.engine_up || handle != e.connected) return kConnectionNotValid;
  if (group != 7 || gpu >= e.uuids.size()) return kBadParam;
  e.group.push_back(gpu);
  return kOk;
}

__attribute__((visibility("default"))) dcgm_return dcgmFieldGroupCreate(
    dcgm_handle handle, int count, const unsigned short* /*fields*/, const char* /*name*/,
    uintptr_t* field_group) {
  FakeEngine& e = engine();
  const std::lock_guard lock(e.mutex);
  if (!e.engine_up || handle != e.connected) return kConnectionNotValid;
  if (count <= 0 || count > 128) return kBadParam;
  *field_group = static_cast<uintptr_t>(1000 + count);
  return kOk;
}

__attribute__((visibility("default"))) dcgm_return dcgmFieldGroupDestroy(dcgm_handle, uintptr_t) {
  return kOk;
}

__attribute__((visibility("default"))) dcgm_return dcgmWatchFields(
    dcgm_handle handle, uintptr_t group, uintptr_t field_group, long long update_us,
    double /*keep_age*/, int /*keep_samples*/) {
  FakeEngine& e = engine();
  const std::lock_guard lock(e.mutex);
  if (!e.engine_up || handle != e.connected) return kConnectionNotValid;
  if (group != 7 || field_group <= 1000) return kBadParam;
  ++e.watches;
  if (!e.watch_results.empty()) {
    const dcgm_return r = e.watch_results.front();
    e.watch_results.erase(e.watch_results.begin());
    if (r != kOk) return r;
  }
  e.last_update_us = update_us;
  e.last_watch_field_count = static_cast<int>(field_group - 1000);
  return kOk;
}

__attribute__((visibility("default"))) dcgm_return dcgmUnwatchFields(dcgm_handle handle, uintptr_t,
                                                                     uintptr_t) {
  FakeEngine& e = engine();
  const std::lock_guard lock(e.mutex);
  if (!e.engine_up || handle != e.connected) return kConnectionNotValid;
  ++e.unwatches;
  return kOk;
}

__attribute__((visibility("default"))) dcgm_return dcgmEntitiesGetLatestValues(
    dcgm_handle handle, fake_entity_pair* entities, unsigned int entity_count,
    unsigned short* fields, unsigned int field_count, unsigned int flags,
    fake_field_value_v2* out) {
  static_assert(sizeof(fake_field_value_v2) == kFieldValueV2Size);
  FakeEngine& e = engine();
  const std::lock_guard lock(e.mutex);
  if (!e.engine_up || handle != e.connected) return kConnectionNotValid;
  if (entities == nullptr || fields == nullptr || out == nullptr) return kBadParam;
  // Out of order on purpose, as DCGM warns it may be: fields outer, entities inner.
  std::size_t k = 0;
  for (unsigned int f = 0; f < field_count; ++f) {
    for (unsigned int i = 0; i < entity_count; ++i, ++k) {
      fake_field_value_v2& v = out[k];
      std::memset(&v, 0, sizeof v);
      v.version = (2U << 24U) | kFieldValueV2Size;
      v.entity_group = entities[i].entity_group;
      v.entity_id = entities[i].entity_id;
      v.field_id = fields[f];
      if (entities[i].entity_group != kFeGpu || entities[i].entity_id >= e.uuids.size()) {
        v.status = kBadParam;
        continue;
      }
      if (fields[f] == kUuidField) {
        if ((flags & 1U) == 0) {
          v.status = kNotWatched;  // nothing watches the UUID: only live data has it
          continue;
        }
        v.field_type = 's';
        std::strncpy(v.value.str, e.uuids[entities[i].entity_id].c_str(), sizeof v.value.str - 1);
        continue;
      }
      v.status = kNoData;
      if (from_env.on && fields[f] >= 1002 && fields[f] <= 1012) {
        v.status = kOk;
        v.ts = now_us();
        if (fields[f] >= 1009) {
          v.field_type = 'i';
          v.value.i64 = static_cast<int64_t>(from_env.ratio * 1073741824.0);
        } else {
          v.field_type = 'd';
          v.value.dbl = from_env.ratio;
        }
      }
      for (const auto& fv : e.values) {
        if (fv.gpu != entities[i].entity_id || fv.field != fields[f]) continue;
        v.status = fv.status;
        v.field_type = fv.type;
        v.ts = fv.ts;
        if (fv.type == 'd') {
          v.value.dbl = fv.dbl;
        } else {
          v.value.i64 = fv.i64;
        }
      }
    }
  }
  return kOk;
}

__attribute__((visibility("default"))) const char* errorString(dcgm_return r) {
  return r == kConnectionNotValid ? "The connection to the host engine is not valid any longer"
                                  : "fake DCGM error";
}

}  // extern "C"
