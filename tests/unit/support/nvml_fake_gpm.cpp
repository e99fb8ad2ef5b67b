// SPDX-License-Identifier: Apache-2.0
// The fake NVML's event, MIG and GPM entry points.
#include <algorithm>

#include "nvml_fake.hpp"

namespace gpulens::testing::fake_detail {
namespace {

Return take_gpm_sample(Dev d, long gpu_instance, sources::nvml::GpmSample s) {
  FAKE_ENTER(gpu_instance < 0 ? "nvmlGpmSampleGet" : "nvmlGpmMigSampleGet", d);
  if (gpu_of(d)->gpm_sample_ret != Return::Success) return gpu_of(d)->gpm_sample_ret;
  auto* sample = reinterpret_cast<FakeGpmSample*>(s);
  sample->gpu = gpu_of(d);
  sample->t = fake().mono;
  sample->gpu_instance = gpu_instance;
  return Return::Success;
}

}  // namespace

void add_events_and_mig(std::map<std::string, void*>& t) {
  static int event_set_token = 0;
  put<&sources::NvmlApi::eventSetCreate>(
      t, "nvmlEventSetCreate", [](sources::nvml::EventSet* set) -> Return {
        enter("nvmlEventSetCreate");
        *set = reinterpret_cast<sources::nvml::EventSet>(&event_set_token);
        return Return::Success;
      });
  put<&sources::NvmlApi::deviceRegisterEvents>(
      t, "nvmlDeviceRegisterEvents",
      [](Dev d, unsigned long long, sources::nvml::EventSet) -> Return {
        FAKE_ENTER("nvmlDeviceRegisterEvents", d);
        return Return::Success;
      });
  put<&sources::NvmlApi::eventSetWait_v2>(
      t, "nvmlEventSetWait_v2",
      [](sources::nvml::EventSet, sources::nvml::EventData* data, unsigned) -> Return {
        enter("nvmlEventSetWait_v2");
        if (fake().events.empty()) return Return::Timeout;
        *data = fake().events.front();
        fake().events.pop_front();
        return Return::Success;
      });
  put<&sources::NvmlApi::eventSetFree>(t, "nvmlEventSetFree",
                                       [](sources::nvml::EventSet) -> Return {
                                         enter("nvmlEventSetFree");
                                         return Return::Success;
                                       });
  put<&sources::NvmlApi::deviceGetMaxMigDeviceCount>(
      t, "nvmlDeviceGetMaxMigDeviceCount", [](Dev d, unsigned* n) -> Return {
        FAKE_ENTER("nvmlDeviceGetMaxMigDeviceCount", d);
        *n = static_cast<unsigned>(gpu_of(d)->mig_instances.size());
        return gpu_of(d)->mig ? Return::Success : Return::NotSupported;
      });
  put<&sources::NvmlApi::deviceGetMigDeviceHandleByIndex>(
      t, "nvmlDeviceGetMigDeviceHandleByIndex", [](Dev d, unsigned i, Dev* out) -> Return {
        FAKE_ENTER("nvmlDeviceGetMigDeviceHandleByIndex", d);
        if (i >= gpu_of(d)->mig_instances.size()) return Return::NotFound;
        auto& mig =
            fake().mig_devices.emplace_back(FakeMigDevice{gpu_of(d), gpu_of(d)->mig_instances[i]});
        *out = reinterpret_cast<Dev>(&mig);
        return Return::Success;
      });
  put<&sources::NvmlApi::deviceGetGpuInstanceId>(
      t, "nvmlDeviceGetGpuInstanceId", [](Dev d, unsigned* id) -> Return {
        *id = reinterpret_cast<FakeMigDevice*>(d)->gpu_instance;
        return Return::Success;
      });
}

void add_gpm(std::map<std::string, void*>& t) {
  put<&sources::NvmlApi::gpmQueryDeviceSupport>(
      t, "nvmlGpmQueryDeviceSupport", [](Dev d, sources::nvml::GpmSupport* s) -> Return {
        FAKE_ENTER("nvmlGpmQueryDeviceSupport", d);
        if (s->version != sources::nvml::kGpmSupportVersion) return Return::ArgumentVersionMismatch;
        s->isSupportedDevice = gpu_of(d)->gpm_supported ? 1U : 0U;
        return gpu_of(d)->gpm_query_ret;
      });
  put<&sources::NvmlApi::gpmSampleAlloc>(
      t, "nvmlGpmSampleAlloc", [](sources::nvml::GpmSample* s) -> Return {
        ++fake().live_gpm_samples;
        *s = reinterpret_cast<sources::nvml::GpmSample>(new FakeGpmSample());
        return Return::Success;
      });
  put<&sources::NvmlApi::gpmSampleFree>(t, "nvmlGpmSampleFree",
                                        [](sources::nvml::GpmSample s) -> Return {
                                          --fake().live_gpm_samples;
                                          delete reinterpret_cast<FakeGpmSample*>(s);
                                          return Return::Success;
                                        });
  put<&sources::NvmlApi::gpmSampleGet>(
      t, "nvmlGpmSampleGet",
      [](Dev d, sources::nvml::GpmSample s) -> Return { return take_gpm_sample(d, -1, s); });
  put<&sources::NvmlApi::gpmMigSampleGet>(
      t, "nvmlGpmMigSampleGet", [](Dev d, unsigned gi, sources::nvml::GpmSample s) -> Return {
        return take_gpm_sample(d, static_cast<long>(gi), s);
      });
  put<&sources::NvmlApi::gpmMetricsGet>(
      t, "nvmlGpmMetricsGet", [](sources::nvml::GpmMetricsGet* m) -> Return {
        const auto* s1 = reinterpret_cast<FakeGpmSample*>(m->sample1);
        const auto* s2 = reinterpret_cast<FakeGpmSample*>(m->sample2);
        if (m->version != sources::nvml::kGpmMetricsGetVersion || s1 == nullptr || s2 == nullptr ||
            s1->gpu == nullptr || s1->gpu != s2->gpu || s2->t <= s1->t ||
            m->numMetrics > sources::nvml::kGpmMetricsRequestLimit) {
          return Return::InvalidArgument;
        }
        FakeGpu* g = s2->gpu;
        ++fake().calls["nvmlGpmMetricsGet#" + std::to_string(index_of(g))];
        fake().min_gpm_interval = std::min(fake().min_gpm_interval, s2->t - s1->t);
        // MIG instances read the device's values plus their instance id, to tell them apart.
        const double offset = s2->gpu_instance < 0 ? 0.0 : static_cast<double>(s2->gpu_instance);
        for (unsigned i = 0; i < m->numMetrics; ++i) {
          auto it = g->gpm.find(m->metrics[i].metricId);
          if (it == g->gpm.end()) {
            m->metrics[i].nvmlReturn = Return::NotSupported;
            continue;
          }
          m->metrics[i].nvmlReturn = it->second.ret;
          m->metrics[i].value = it->second.value + offset;
        }
        return Return::Success;
      });
}

}  // namespace gpulens::testing::fake_detail
