// SPDX-License-Identifier: Apache-2.0
#pragma once
// Our own declarations of the subset of NVML that gpulens uses, so that the build
// needs neither nvml.h nor the NVIDIA driver (nvtop and btop do the same). Names
// follow NVML's without the nvml prefix; layouts are NVML's and are pinned by
// static_asserts where docs/nvml-facts.md states sizes or offsets.
#include <cstddef>
#include <cstdint>

namespace gpulens::sources::nvml {

// nvmlReturn_t. A C enum is int-sized, so a fixed int underlying type is ABI-equal.
enum class Return : int {
  Success = 0,
  Uninitialized = 1,
  InvalidArgument = 2,
  NotSupported = 3,
  NoPermission = 4,
  AlreadyInitialized = 5,
  NotFound = 6,
  InsufficientSize = 7,
  InsufficientPower = 8,
  DriverNotLoaded = 9,
  Timeout = 10,
  IrqIssue = 11,
  LibraryNotFound = 12,
  FunctionNotFound = 13,
  CorruptedInforom = 14,
  GpuIsLost = 15,
  ResetRequired = 16,
  OperatingSystem = 17,
  LibRmVersionMismatch = 18,
  InUse = 19,
  Memory = 20,
  NoData = 21,
  VgpuEccNotSupported = 22,
  InsufficientResources = 23,
  FreqNotSupported = 24,
  ArgumentVersionMismatch = 25,
  Deprecated = 26,
  NotReady = 27,
  GpuNotFound = 28,
  InvalidState = 29,
  Unknown = 999,
};

inline constexpr int code(Return r) {
  return static_cast<int>(r);
}

// Opaque handles: NVML only ever hands out pointers to these.
struct DeviceOpaque;
struct EventSetOpaque;
struct GpmSampleOpaque;
using Device = DeviceOpaque*;
using EventSet = EventSetOpaque*;
using GpmSample = GpmSampleOpaque*;

// Buffer sizes NVML documents for its string getters (the _V2 sizes, the largest).
inline constexpr unsigned kNameBufferSize = 96;
inline constexpr unsigned kUuidBufferSize = 96;
inline constexpr unsigned kDriverVersionBufferSize = 80;

// nvmlClockType_t
inline constexpr int kClockGraphics = 0;
inline constexpr int kClockSm = 1;
inline constexpr int kClockMem = 2;

// nvmlTemperatureSensors_t
inline constexpr int kTemperatureGpu = 0;

// nvmlMemoryErrorType_t and nvmlEccCounterType_t
inline constexpr int kMemoryErrorCorrected = 0;
inline constexpr int kMemoryErrorUncorrected = 1;
inline constexpr int kEccCounterVolatile = 0;

// nvmlPstates_t: 0..15, and 32 for "unknown".
inline constexpr int kPstateUnknown = 32;

// nvmlDeviceArchitecture_t
inline constexpr unsigned kArchKepler = 2;
inline constexpr unsigned kArchMaxwell = 3;
inline constexpr unsigned kArchPascal = 4;
inline constexpr unsigned kArchVolta = 5;
inline constexpr unsigned kArchTuring = 6;
inline constexpr unsigned kArchAmpere = 7;
inline constexpr unsigned kArchAda = 8;
inline constexpr unsigned kArchHopper = 9;
inline constexpr unsigned kArchBlackwell = 10;
inline constexpr unsigned kArchOrin = 11;  // NVML_DEVICE_ARCH_T23X
inline constexpr unsigned kArchUnknown = 0xffffffffU;

// NVML_FI_DEV_MEMORY_TEMP: HBM temperature through nvmlDeviceGetFieldValues.
inline constexpr unsigned kFieldMemoryTemp = 82;

// nvmlEventTypeXidCriticalError
inline constexpr std::uint64_t kEventTypeXidCriticalError = 0x8;

// NVML_DEVICE_MIG_ENABLE (nvmlDeviceGetMigMode's currentMode)
inline constexpr unsigned kMigEnable = 1;

// NVML_NVLINK_MAX_LINKS as of Hopper/Blackwell headers.
inline constexpr unsigned kNvlinkMaxLinks = 18;

// nvmlNvLinkErrorCounter_t (nvml.h: NVML_NVLINK_ERROR_DL_REPLAY = 0,
// NVML_NVLINK_ERROR_DL_RECOVERY = 1, NVML_NVLINK_ERROR_DL_CRC_FLIT = 2,
// NVML_NVLINK_ERROR_DL_CRC_DATA = 3): the four dcgm-exporter exports per GPU.
inline constexpr unsigned kNvlinkErrorDlReplay = 0;
inline constexpr unsigned kNvlinkErrorDlRecovery = 1;
inline constexpr unsigned kNvlinkErrorDlCrcFlit = 2;
inline constexpr unsigned kNvlinkErrorDlCrcData = 3;

// NVML_FI_DEV_NVLINK_*_ERROR_COUNT_TOTAL: a counter summed over every link of the
// GPU, in the order of kNvlinkErrorDl* above (replay, recovery, CRC flit, CRC data).
inline constexpr unsigned kFieldNvlinkReplayTotal = 52;
inline constexpr unsigned kFieldNvlinkRecoveryTotal = 59;
inline constexpr unsigned kFieldNvlinkCrcFlitTotal = 38;
inline constexpr unsigned kFieldNvlinkCrcDataTotal = 45;
// NVML_FI_DEV_NVLINK_ERROR_DL_*: one link's counter, the link in scopeId; the
// totals above are not supported on Hopper.
inline constexpr unsigned kFieldNvlinkDlReplay = 161;
inline constexpr unsigned kFieldNvlinkDlRecovery = 162;
inline constexpr unsigned kFieldNvlinkDlCrc = 163;

// nvmlEnableState_t: what nvmlDeviceGetNvLinkState writes (NVML_FEATURE_ENABLED).
inline constexpr int kFeatureEnabled = 1;

// NVML_VALUE_NOT_AVAILABLE: what usedGpuMemory holds when the driver cannot tell
// (for example for processes in another container or under MIG).
inline constexpr std::uint64_t kValueNotAvailable = ~std::uint64_t{0};

// nvmlUtilization_t
struct Utilization {
  unsigned gpu;
  unsigned memory;
};
static_assert(sizeof(Utilization) == 8);

// nvmlMemory_v2_t; `version` must be kMemoryV2Version (its size | 2 << 24).
struct Memory_v2 {
  unsigned version;
  unsigned long long total;
  unsigned long long reserved;
  unsigned long long free;
  unsigned long long used;
};
inline constexpr unsigned kMemoryV2Version = 0x02000028;
static_assert(sizeof(Memory_v2) == 0x28);
static_assert((kMemoryV2Version & 0xffffffU) == sizeof(Memory_v2));
static_assert(offsetof(Memory_v2, used) == 32);

// nvmlPciInfo_t as filled by nvmlDeviceGetPciInfo_v3.
struct PciInfo {
  char busIdLegacy[16];
  unsigned domain;
  unsigned bus;
  unsigned device;
  unsigned pciDeviceId;
  unsigned pciSubSystemId;
  char busId[32];
};
static_assert(sizeof(PciInfo) == 68);

// nvmlProcessInfo_t as filled by the _v3 running-process getters: 24 bytes. The
// unsuffixed symbols fill an older 16-byte struct, which is why we never ask for them.
struct ProcessInfo_v3 {
  unsigned pid;
  unsigned long long usedGpuMemory;  // bytes, or kValueNotAvailable
  unsigned gpuInstanceId;
  unsigned computeInstanceId;
};
static_assert(sizeof(ProcessInfo_v3) == 24);
static_assert(offsetof(ProcessInfo_v3, usedGpuMemory) == 8);
static_assert(offsetof(ProcessInfo_v3, gpuInstanceId) == 16);

// nvmlProcessUtilizationSample_t (nvmlDeviceGetProcessUtilization).
struct ProcessUtilizationSample {
  unsigned pid;
  unsigned long long timeStamp;  // CPU timestamp in microseconds
  unsigned smUtil;
  unsigned memUtil;
  unsigned encUtil;
  unsigned decUtil;
};
static_assert(sizeof(ProcessUtilizationSample) == 32);

// nvmlEventData_t as filled by nvmlEventSetWait_v2.
struct EventData {
  Device device;
  unsigned long long eventType;
  unsigned long long eventData;  // the XID for kEventTypeXidCriticalError
  unsigned gpuInstanceId;
  unsigned computeInstanceId;
};
static_assert(sizeof(EventData) == 32);

// nvmlDeviceAttributes_t (nvmlDeviceGetAttributes_v2).
struct DeviceAttributes {
  unsigned multiprocessorCount;
  unsigned sharedCopyEngineCount;
  unsigned sharedDecoderCount;
  unsigned sharedEncoderCount;
  unsigned sharedJpegCount;
  unsigned sharedOfaCount;
  unsigned gpuInstanceSliceCount;
  unsigned computeInstanceSliceCount;
  unsigned long long memorySizeMB;
};
static_assert(sizeof(DeviceAttributes) == 40);

// nvmlValue_t and nvmlFieldValue_t (nvmlDeviceGetFieldValues).
union Value {
  double dVal;
  unsigned uiVal;
  unsigned long ulVal;
  unsigned long long ullVal;
  long long sllVal;
  int siVal;
  unsigned short usVal;
};
inline constexpr unsigned kValueTypeDouble = 0;
inline constexpr unsigned kValueTypeUnsignedInt = 1;
inline constexpr unsigned kValueTypeUnsignedLong = 2;
inline constexpr unsigned kValueTypeUnsignedLongLong = 3;
inline constexpr unsigned kValueTypeSignedLongLong = 4;
inline constexpr unsigned kValueTypeSignedInt = 5;
inline constexpr unsigned kValueTypeUnsignedShort = 6;

struct FieldValue {
  unsigned fieldId;
  unsigned scopeId;
  long long timestamp;
  long long latencyUsec;
  unsigned valueType;  // nvmlValueType_t, an int-sized enum
  Return nvmlReturn;   // check before reading value
  Value value;
};
static_assert(sizeof(FieldValue) == 40);
static_assert(offsetof(FieldValue, nvmlReturn) == 28);
static_assert(offsetof(FieldValue, value) == 32);

// nvmlGpmSupport_t
struct GpmSupport {
  unsigned version;  // kGpmSupportVersion
  unsigned isSupportedDevice;
};
inline constexpr unsigned kGpmSupportVersion = 1;
static_assert(sizeof(GpmSupport) == 8);

// nvmlGpmMetricId_t values gpulens reads (design.md).
inline constexpr unsigned kGpmGraphicsUtil = 1;
inline constexpr unsigned kGpmSmUtil = 2;
inline constexpr unsigned kGpmSmOccupancy = 3;
inline constexpr unsigned kGpmIntegerUtil = 4;
inline constexpr unsigned kGpmAnyTensorUtil = 5;
inline constexpr unsigned kGpmDfmaTensorUtil = 6;
inline constexpr unsigned kGpmHmmaTensorUtil = 7;
inline constexpr unsigned kGpmImmaTensorUtil = 9;
inline constexpr unsigned kGpmDramBwUtil = 10;
inline constexpr unsigned kGpmFp64Util = 11;
inline constexpr unsigned kGpmFp32Util = 12;
inline constexpr unsigned kGpmFp16Util = 13;
inline constexpr unsigned kGpmPcieTxPerSec = 20;
inline constexpr unsigned kGpmPcieRxPerSec = 21;
inline constexpr unsigned kGpmNvlinkTotalRxPerSec = 60;
inline constexpr unsigned kGpmNvlinkTotalTxPerSec = 61;

// nvmlGpmMetric_t: 40 bytes.
struct GpmMetric {
  unsigned metricId;
  Return nvmlReturn;  // per metric: check before reading value
  double value;
  struct {
    char* shortName;
    char* longName;
    char* unit;
  } metricInfo;
};
static_assert(sizeof(GpmMetric) == 40);
static_assert(offsetof(GpmMetric, value) == 8);

// NVML_GPM_METRIC_MAX was 98 (CUDA 12.0-12.8), 210 (13.0) and 333 (13.2) while the
// struct version stayed 1, so the driver cannot know which header the caller was
// built with. A correct driver touches only metrics[0, numMetrics), but one that
// copied its whole struct would touch up to its own MAX; sizing for the largest
// known MAX (13 KB, allocated once per device) keeps even that inside our buffer.
// numMetrics itself must stay <= 98 so that the oldest GPM drivers accept it.
inline constexpr unsigned kGpmMetricMax = 333;
inline constexpr unsigned kGpmMetricsRequestLimit = 98;
inline constexpr unsigned kGpmMetricsGetVersion = 1;

// nvmlGpmMetricsGet_t: {version, numMetrics, sample1 (older), sample2 (newer), metrics}.
struct GpmMetricsGet {
  unsigned version;
  unsigned numMetrics;
  GpmSample sample1;
  GpmSample sample2;
  GpmMetric metrics[kGpmMetricMax];
};
static_assert(offsetof(GpmMetricsGet, sample1) == 8);
static_assert(offsetof(GpmMetricsGet, metrics) == 24);
static_assert(sizeof(GpmMetricsGet) == 24 + 40 * kGpmMetricMax);

}  // namespace gpulens::sources::nvml
