// SPDX-License-Identifier: Apache-2.0
#include "sources/kube/pod_resources.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "sources/kube/protobuf_wire.hpp"

namespace gpulens::sources::kube {
namespace {

// Field numbers of k8s.io/kubelet/pkg/apis/podresources/v1/api.proto. Later
// fields (cpu_ids, memory, topology, dynamic_resources) are skipped.
constexpr std::uint32_t kListPodResources = 1;  // ListPodResourcesResponse.pod_resources
constexpr std::uint32_t kPodName = 1, kPodNamespace = 2, kPodContainers = 3;
constexpr std::uint32_t kContainerName = 1, kContainerDevices = 2;
constexpr std::uint32_t kDevicesResource = 1, kDevicesIds = 2;

// Kubernetes names are DNS labels or subdomains: lower-case letters, digits, '-'
// and '.', at most 253 characters. Anything else is not the kubelet's.
bool valid_kube_name(std::string_view s) {
  return !s.empty() && s.size() <= 253 && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.';
  });
}

// A device plugin's id: letters, digits and - : / . _ (UUIDs, indices, MIG paths).
bool valid_device_id(std::string_view s) {
  return !s.empty() && s.size() <= 128 && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == ':' || c == '/' ||
           c == '.' || c == '_';
  });
}

bool is_nvidia_resource(std::string_view r) {
  return r.substr(0, 11) == "nvidia.com/" && r.size() > 11 && r.size() <= 253;
}

struct Container {
  std::string name;
  std::vector<std::pair<std::string, std::string>> devices;  // resource, id
};

bool parse_devices(std::string_view message, Container& c, PodResourcesList& out) {
  ProtoReader r(message);
  std::string resource;
  std::vector<std::string_view> ids;
  while (r.next()) {
    if (r.field() == kDevicesResource && r.wire_type() == WireType::Bytes) {
      resource = std::string(r.bytes());
    } else if (r.field() == kDevicesIds && r.wire_type() == WireType::Bytes) {
      ids.push_back(r.bytes());
    }
  }
  if (!r.ok()) return false;
  if (!is_nvidia_resource(resource)) return true;
  for (const auto id : ids) {
    if (!valid_device_id(id)) {
      ++out.malformed;
      continue;
    }
    c.devices.emplace_back(resource, std::string(id));
  }
  return true;
}

bool parse_pod(std::string_view message, PodResourcesList& out) {
  ProtoReader r(message);
  std::string name, ns;
  std::vector<Container> containers;
  while (r.next()) {
    if (r.wire_type() != WireType::Bytes) continue;
    if (r.field() == kPodName) {
      name = std::string(r.bytes());
    } else if (r.field() == kPodNamespace) {
      ns = std::string(r.bytes());
    } else if (r.field() == kPodContainers) {
      ProtoReader cr(r.bytes());
      Container c;
      while (cr.next()) {
        if (cr.field() == kContainerName && cr.wire_type() == WireType::Bytes) {
          c.name = std::string(cr.bytes());
        } else if (cr.field() == kContainerDevices && cr.wire_type() == WireType::Bytes) {
          if (!parse_devices(cr.bytes(), c, out)) return false;
        }
      }
      if (!cr.ok()) return false;
      containers.push_back(std::move(c));
    }
  }
  if (!r.ok()) return false;
  ++out.pods;
  for (auto& c : containers) {
    if (c.devices.empty()) continue;
    if (!valid_kube_name(ns) || !valid_kube_name(name) || !valid_kube_name(c.name)) {
      out.malformed += c.devices.size();
      continue;
    }
    for (auto& [resource, id] : c.devices) {
      if (out.devices.size() >= kMaxPodDevices) {
        ++out.too_many;
        continue;
      }
      out.devices.push_back({ns, name, c.name, std::move(resource), std::move(id)});
    }
  }
  return true;
}

bool all_digits(std::string_view s) {
  return !s.empty() && s.size() <= 9 &&
         std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

int to_int(std::string_view s) {
  int v = -1;
  std::from_chars(s.data(), s.data() + s.size(), v);
  return v;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

int by_uuid(std::string_view uuid, const std::vector<AllocationDevice>& devices) {
  const std::string want = lower(uuid);
  for (const auto& d : devices) {
    if (!d.uuid.empty() && lower(d.uuid) == want) return d.index;
  }
  return -1;
}

int by_index(int index, const std::vector<AllocationDevice>& devices) {
  for (const auto& d : devices) {
    if (d.index == index) return d.index;
  }
  return -1;
}

}  // namespace

bool parse_pod_resources_list(std::string_view message, PodResourcesList& out) {
  out = {};
  if (message.size() > kMaxPodResourcesBytes) return false;
  ProtoReader r(message);
  while (r.next()) {
    if (r.field() == kListPodResources && r.wire_type() == WireType::Bytes) {
      if (!parse_pod(r.bytes(), out)) {
        out = {};
        return false;
      }
    }
  }
  if (!r.ok()) out = {};
  return r.ok();
}

int match_plugin_device(std::string_view id, const std::vector<AllocationDevice>& devices) {
  // A shared GPU's replica: "<id>::<n>" (time-slicing and MPS).
  if (const auto sep = id.find("::"); sep != std::string_view::npos) {
    if (!all_digits(id.substr(sep + 2))) return -1;
    id = id.substr(0, sep);
  }
  if (all_digits(id)) return by_index(to_int(id), devices);
  // MIG with index ids: "<GPU index>:<MIG device index>".
  if (const auto colon = id.find(':'); colon != std::string_view::npos) {
    const auto gpu = id.substr(0, colon);
    return all_digits(gpu) && all_digits(id.substr(colon + 1)) ? by_index(to_int(gpu), devices)
                                                               : -1;
  }
  if (id.substr(0, 4) == "GPU-") return by_uuid(id, devices);
  if (id.substr(0, 4) == "MIG-") {
    // Drivers before R470 named a MIG device by its parent: MIG-GPU-<uuid>/<gi>/<ci>.
    if (id.substr(4, 4) == "GPU-") return by_uuid(id.substr(4, id.find('/') - 4), devices);
    const std::string want = lower(id);
    for (const auto& d : devices) {
      for (const auto& mig : d.mig_uuids) {
        if (lower(mig) == want) return d.index;
      }
    }
  }
  return -1;
}

}  // namespace gpulens::sources::kube
