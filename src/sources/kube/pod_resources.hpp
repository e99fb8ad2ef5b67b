// SPDX-License-Identifier: Apache-2.0
#pragma once
// The kubelet's pod-resources answer (its `List` call, API v1): which pod and
// container each device plugin's device is assigned to, whether or not anything in
// the pod runs on it. NVIDIA's device plugin names GPUs three ways, a plugin
// setting (docs/kubernetes.md, "Allocation"): by UUID ("GPU-…", the default), by
// NVML index ("0") and, under MIG, by MIG device ("MIG-…", or "0:1" with index
// ids); shared GPUs (time-slicing, MPS) add a replica suffix ("GPU-…::3").
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "sources/host/slurm_allocations.hpp"

namespace gpulens::sources::kube {

// One device the kubelet assigned to one container.
struct PodDevice {
  std::string namespace_name;
  std::string pod;
  std::string container;
  std::string resource;   // the device plugin's resource, e.g. "nvidia.com/gpu"
  std::string device_id;  // as the plugin named it
};

// Bounds on one answer: a node runs at most a few hundred pods (the kubelet's
// default is 110), each GPU shared by at most a few dozen replicas.
inline constexpr std::size_t kMaxPodResourcesBytes = 16u << 20;
inline constexpr std::size_t kMaxPodDevices = 4096;

struct PodResourcesList {
  std::vector<PodDevice> devices;  // NVIDIA devices only (resource "nvidia.com/…")
  std::size_t pods = 0;            // pods in the answer, with or without devices
  std::size_t malformed = 0;       // entries skipped: a name or id that is not one
  std::size_t too_many = 0;        // devices past kMaxPodDevices
};

// Decodes a ListPodResourcesResponse; false when the message is not one (then
// nothing of it is used: a half-read answer would charge GPUs to nobody).
bool parse_pod_resources_list(std::string_view message, PodResourcesList& out);

// The GPU (NVML index) a device plugin's id names, or -1. MIG devices count for
// their parent GPU: the allocation is per GPU, and a MIG slice held is a GPU held.
int match_plugin_device(std::string_view id, const std::vector<AllocationDevice>& devices);

}  // namespace gpulens::sources::kube
