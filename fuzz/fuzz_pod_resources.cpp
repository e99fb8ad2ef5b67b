// SPDX-License-Identifier: Apache-2.0
// Fuzz target: the kubelet's pod-resources answer (protobuf's wire format, read by
// hand in src/sources/kube) and the device plugin's ids matched against GPUs.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "sources/kube/pod_resources.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  gpulens::sources::kube::PodResourcesList list;
  (void)gpulens::sources::kube::parse_pod_resources_list(bytes, list);
  const std::vector<gpulens::sources::AllocationDevice> gpus = {
      {0, "GPU-0a0a", "", {"MIG-7c7c"}}, {1, "GPU-1b1b", "", {}}};
  for (const auto& d : list.devices) {
    (void)gpulens::sources::kube::match_plugin_device(d.device_id, gpus);
  }
  (void)gpulens::sources::kube::match_plugin_device(bytes.substr(0, 200), gpus);
  return 0;
}
