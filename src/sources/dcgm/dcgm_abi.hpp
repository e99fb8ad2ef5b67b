// SPDX-License-Identifier: Apache-2.0
#pragma once
// Our own declarations of the subset of DCGM that gpulens calls, so that the build
// needs neither DCGM's headers nor DCGM (neither is in Debian). Every layout, version
// word, constant and field id below is DCGM's, written from its public headers at
// NVIDIA/DCGM commit 72fa3feaa67d716a75323a8f47c34ff3ee73f824 (2026-07-06, DCGM 4.x)
// and pinned by static_assert; "structs.h:37" means dcgmlib/dcgm_structs.h line 37 of
// that commit, "fields.h" dcgmlib/dcgm_fields.h and "agent.h" dcgmlib/dcgm_agent.h.
// The tests' fake libdcgm (tests/fakes/dcgm_fake_lib.cpp) declares the same ABI again
// on its own, so a mistake here cannot hide behind a shared header.
#include <cstddef>
#include <cstdint>

namespace gpulens::sources::dcgm {

// dcgmReturn_t (structs.h:344-416): a C enum, int-sized. Only the codes gpulens
// tells apart are named; the rest are reported by number and errorString().
enum class Return : int {
  Ok = 0,                          // DCGM_ST_OK, structs.h:346
  BadParam = -1,                   // DCGM_ST_BADPARAM, structs.h:347
  NotSupported = -6,               // DCGM_ST_NOT_SUPPORTED, structs.h:351
  InitError = -7,                  // DCGM_ST_INIT_ERROR, structs.h:352
  Uninitialized = -10,             // DCGM_ST_UNINITIALIZED, structs.h:355
  Timeout = -11,                   // DCGM_ST_TIMEOUT, structs.h:356
  VerMismatch = -12,               // DCGM_ST_VER_MISMATCH, structs.h:357
  NoData = -14,                    // DCGM_ST_NO_DATA, structs.h:359
  StaleData = -15,                 // DCGM_ST_STALE_DATA, structs.h:360
  NotWatched = -16,                // DCGM_ST_NOT_WATCHED, structs.h:361
  NoPermission = -17,              // DCGM_ST_NO_PERMISSION, structs.h:362
  GpuIsLost = -18,                 // DCGM_ST_GPU_IS_LOST, structs.h:363
  ConnectionNotValid = -21,        // DCGM_ST_CONNECTION_NOT_VALID, structs.h:366
  GpuNotSupported = -22,           // DCGM_ST_GPU_NOT_SUPPORTED, structs.h:367
  RequiresRoot = -29,              // DCGM_ST_REQUIRES_ROOT, structs.h:375
  ModuleNotLoaded = -33,           // DCGM_ST_MODULE_NOT_LOADED, structs.h:379
  InUse = -34,                     // DCGM_ST_IN_USE, structs.h:380
  ProfilingNotSupported = -36,     // DCGM_ST_PROFILING_NOT_SUPPORTED, structs.h:383
  ProfilingLibraryError = -37,     // DCGM_ST_PROFILING_LIBRARY_ERROR, structs.h:384
  ProfilingMultiPass = -38,        // DCGM_ST_PROFILING_MULTI_PASS, structs.h:385
  InsufficientDriverVersion = -44  // DCGM_ST_INSUFFICIENT_DRIVER_VERSION, structs.h:392
};
static_assert(sizeof(Return) == sizeof(int));
inline constexpr int code(Return r) {
  return static_cast<int>(r);
}

// dcgmHandle_t, dcgmGpuGrp_t, dcgmFieldGrp_t: typedef uintptr_t (structs.h:512-514).
using Handle = std::uintptr_t;
using GpuGroup = std::uintptr_t;
using FieldGroup = std::uintptr_t;

// MAKE_DCGM_VERSION(typeName, ver): sizeof(typeName) | ver << 24 (structs.h:37).
template <typename T>
constexpr unsigned make_version(unsigned ver) {
  return static_cast<unsigned>(sizeof(T) | (static_cast<unsigned long>(ver) << 24U));
}

// dcgmConnectV2Params_v2 (structs.h:583-594).
struct ConnectV2Params_v2 {
  unsigned version;
  unsigned persistAfterDisconnect;  // 0: DCGM removes this connection's watches when it goes
  unsigned timeoutMs;
  unsigned addressIsUnixSocket;
};
static_assert(sizeof(ConnectV2Params_v2) == 16);
static_assert(offsetof(ConnectV2Params_v2, timeoutMs) == 8);
// dcgmConnectV2Params_version2 (structs.h:604).
inline constexpr unsigned kConnectV2ParamsVersion2 = make_version<ConnectV2Params_v2>(2);
static_assert(kConnectV2ParamsVersion2 == 0x02000010U);

// dcgm_field_entity_group_t (fields.h:261-274): a C enum, int-sized.
enum class EntityGroup : int { None = 0, Gpu = 1 };  // DCGM_FE_NONE, DCGM_FE_GPU (fields.h:263-264)
// dcgm_field_eid_t (fields.h:280).
using EntityId = unsigned;

// dcgmGroupEntityPair_t (structs.h:670-674).
struct GroupEntityPair {
  EntityGroup entityGroupId;
  EntityId entityId;
};
static_assert(sizeof(GroupEntityPair) == 8);

inline constexpr std::size_t kMaxStrLength = 256;    // DCGM_MAX_STR_LENGTH, structs.h:238
inline constexpr std::size_t kMaxBlobLength = 4096;  // DCGM_MAX_BLOB_LENGTH, structs.h:2141
inline constexpr int kMaxNumDevices = 32;            // DCGM_MAX_NUM_DEVICES, structs.h:163

// dcgmFieldValue_v2 (structs.h:2172-2190), filled by dcgmEntitiesGetLatestValues.
struct FieldValue_v2 {
  unsigned version;
  EntityGroup entityGroupId;
  EntityId entityId;
  unsigned short fieldId;
  unsigned short fieldType;  // DCGM_FT_*: 'd' double, 'i' int64, 's' string
  int status;                // DCGM_ST_* for this one value
  unsigned unused;           // DCGM's padding so that ts is 8-byte aligned
  std::int64_t ts;           // microseconds since 1970
  union {
    std::int64_t i64;
    double dbl;
    char str[kMaxStrLength];
    char blob[kMaxBlobLength];
  } value;
};
static_assert(offsetof(FieldValue_v2, fieldId) == 12);
static_assert(offsetof(FieldValue_v2, status) == 16);
static_assert(offsetof(FieldValue_v2, ts) == 24);
static_assert(offsetof(FieldValue_v2, value) == 32);
static_assert(sizeof(FieldValue_v2) == 4128);
// dcgmFieldValue_version2 (structs.h:2195).
inline constexpr unsigned kFieldValueVersion2 = make_version<FieldValue_v2>(2);
static_assert(kFieldValueVersion2 == 0x02001020U);

// DCGM_FT_* (fields.h:36-56).
inline constexpr unsigned short kFieldTypeDouble = 'd';
inline constexpr unsigned short kFieldTypeInt64 = 'i';
inline constexpr unsigned short kFieldTypeString = 's';

// Blank sentinels (structs.h:54-85): a value at or above its type's blank base is
// "no value" (DCGM_INT64_IS_BLANK / DCGM_FP64_IS_BLANK, structs.h:145-150).
inline constexpr std::int64_t kInt64Blank = 0x7ffffffffffffff0;  // DCGM_INT64_BLANK, structs.h:59
inline constexpr double kFp64Blank = 140737488355328.0;          // DCGM_FP64_BLANK, structs.h:65
static_assert(kFp64Blank == 140737488355328.0 && kFp64Blank == double(1ULL << 47U));

// dcgmGroupType_t DCGM_GROUP_EMPTY (structs.h:441); dcgmOperationMode_t
// DCGM_OPERATION_MODE_AUTO (structs.h:328): the embedded engine samples by itself.
inline constexpr int kGroupEmpty = 1;
inline constexpr int kOperationModeAuto = 1;

// DCGM_HE_PORT_NUMBER (structs.h:289): the port nv-hostengine listens on by default.
inline constexpr unsigned kDefaultPort = 5555;

// Field ids (fields.h).
inline constexpr unsigned short kFieldGpuUuid = 54;        // DCGM_FI_DEV_GPU_UUID, fields.h:352
inline constexpr unsigned short kFieldSmActive = 1002;     // DCGM_FI_PROF_SM_UTIL_RATIO, :2544
inline constexpr unsigned short kFieldSmOccupancy = 1003;  // DCGM_FI_PROF_SM_OCCUPANCY_RATIO, :2551
inline constexpr unsigned short kFieldTensorActive = 1004;  // DCGM_FI_PROF_TENSOR_UTIL_RATIO, :2557
inline constexpr unsigned short kFieldDramActive = 1005;    // DCGM_FI_PROF_DRAM_UTIL_RATIO, :2563
inline constexpr unsigned short kFieldFp64Active = 1006;    // DCGM_FI_PROF_FP64_UTIL_RATIO, :2568
inline constexpr unsigned short kFieldFp32Active = 1007;    // DCGM_FI_PROF_FP32_UTIL_RATIO, :2573
inline constexpr unsigned short kFieldFp16Active = 1008;    // DCGM_FI_PROF_FP16_UTIL_RATIO, :2578
inline constexpr unsigned short kFieldPcieTxBytes = 1009;   // DCGM_FI_PROF_PCIE_TX_BYTES, :2586
inline constexpr unsigned short kFieldPcieRxBytes = 1010;   // DCGM_FI_PROF_PCIE_RX_BYTES, :2594
inline constexpr unsigned short kFieldNvlinkTxBytes = 1011;  // DCGM_FI_PROF_NVLINK_TX_BYTES, :2600
inline constexpr unsigned short kFieldNvlinkRxBytes = 1012;  // DCGM_FI_PROF_NVLINK_RX_BYTES, :2606
// fields.h:2538-2606 numbers the profiling fields from DCGM_FI_PROF_GR_ENGINE_UTIL_RATIO
// (1001) one by one; a typo in one id above breaks the run.
static_assert(
    kFieldSmActive == 1001 + 1 && kFieldSmOccupancy == kFieldSmActive + 1 &&
    kFieldTensorActive == kFieldSmOccupancy + 1 && kFieldDramActive == kFieldTensorActive + 1 &&
    kFieldFp64Active == kFieldDramActive + 1 && kFieldFp32Active == kFieldFp64Active + 1 &&
    kFieldFp16Active == kFieldFp32Active + 1 && kFieldPcieTxBytes == kFieldFp16Active + 1 &&
    kFieldPcieRxBytes == kFieldPcieTxBytes + 1 && kFieldNvlinkTxBytes == kFieldPcieRxBytes + 1 &&
    kFieldNvlinkRxBytes == kFieldNvlinkTxBytes + 1 && kFieldNvlinkRxBytes == 1012);
static_assert(kFieldGpuUuid == 54);  // DCGM_FI_DEV_GPU_UUID, fields.h:352

}  // namespace gpulens::sources::dcgm
