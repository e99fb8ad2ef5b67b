// SPDX-License-Identifier: Apache-2.0
// The kubelet's pod-resources answer: the device plugin's three ways of naming a
// GPU (UUID, index, MIG) and its replicas, and what one answer charges to which
// pod (protobuf's wire format itself: protobuf_wire_test.cpp). The messages are encoded
// here by hand from the field numbers of the kubelet's api.proto; the e2e test
// (tests/e2e/kubelet_pod_resources.sh) checks the same against protobuf's own
// encoder and a real gRPC server.
#include "sources/kube/pod_resources.hpp"

#include <gtest/gtest.h>

#include "protobuf_encode.hpp"
#include "sources/kube/kube_allocations.hpp"
#include "sources/kube/protobuf_wire.hpp"

namespace gpulens::sources::kube {
namespace {

using gpulens::testing::proto_bytes;
using gpulens::testing::proto_varint;

std::string pr_devices(const std::string& resource, const std::vector<std::string>& ids) {
  std::string m = proto_bytes(1, resource);
  for (const auto& id : ids) m += proto_bytes(2, id);
  // topology (3): a NUMA node, skipped by the reader
  m += proto_bytes(3, proto_bytes(1, proto_varint(1 << 3 | 0) + proto_varint(0)));
  return m;
}

std::string pr_container(const std::string& name, const std::vector<std::string>& devices) {
  std::string m = proto_bytes(1, name);
  for (const auto& d : devices) m += proto_bytes(2, d);
  m += proto_varint(3 << 3 | 0) + proto_varint(7);  // cpu_ids: a varint field, skipped
  return m;
}

std::string pr_pod(const std::string& ns, const std::string& name,
                   const std::vector<std::string>& containers) {
  std::string m = proto_bytes(1, name) + proto_bytes(2, ns);
  for (const auto& c : containers) m += proto_bytes(3, c);
  return m;
}

std::string pr_list(const std::vector<std::string>& pods) {
  std::string m;
  for (const auto& p : pods) m += proto_bytes(1, p);
  return m;
}

std::vector<AllocationDevice> pr_gpus() {
  return {{0, "GPU-0a0a", "", {}}, {1, "GPU-1b1b", "", {"MIG-7c7c", "MIG-8d8d"}}};
}

TEST(PodResourcesList, KeepsNvidiaDevicesWithTheirPodAndContainer) {
  const std::string answer =
      pr_list({pr_pod("ml", "train-0",
                      {pr_container("trainer", {pr_devices("nvidia.com/gpu", {"GPU-0a0a"}),
                                                pr_devices("example.com/nic", {"eth1"})}),
                       pr_container("sidecar", {})}),
               pr_pod("web", "cache-7", {pr_container("redis", {})})});
  PodResourcesList list;
  ASSERT_TRUE(parse_pod_resources_list(answer, list));
  EXPECT_EQ(list.pods, 2u);
  ASSERT_EQ(list.devices.size(), 1u);
  EXPECT_EQ(list.devices[0].namespace_name, "ml");
  EXPECT_EQ(list.devices[0].pod, "train-0");
  EXPECT_EQ(list.devices[0].container, "trainer");
  EXPECT_EQ(list.devices[0].resource, "nvidia.com/gpu");
  EXPECT_EQ(list.devices[0].device_id, "GPU-0a0a");
}

TEST(PodResourcesList, BadNamesAreSkippedAndCountedAndGarbageIsRefusedWhole) {
  const std::string answer = pr_list(
      {pr_pod("ML", "x", {pr_container("c", {pr_devices("nvidia.com/gpu", {"0"})})}),
       pr_pod("ml", "ok", {pr_container("c", {pr_devices("nvidia.com/gpu", {"0", "0\n1"})})})});
  PodResourcesList list;
  ASSERT_TRUE(parse_pod_resources_list(answer, list));
  EXPECT_EQ(list.malformed, 2u);  // the upper-case namespace's device, the id with a newline
  ASSERT_EQ(list.devices.size(), 1u);
  EXPECT_EQ(list.devices[0].pod, "ok");

  // A pod message cut short: nothing of the answer is used.
  std::string cut = answer.substr(0, answer.size() - 3);
  EXPECT_FALSE(parse_pod_resources_list(cut, list));
  EXPECT_TRUE(list.devices.empty());
  EXPECT_FALSE(parse_pod_resources_list("\xff\xff\xff", list));
}

TEST(PodResourcesList, DevicesPastTheBoundAreCounted) {
  std::vector<std::string> ids(kMaxPodDevices + 5, "0");
  PodResourcesList list;
  ASSERT_TRUE(parse_pod_resources_list(
      pr_list({pr_pod("ml", "big", {pr_container("c", {pr_devices("nvidia.com/gpu", ids)})})}),
      list));
  EXPECT_EQ(list.devices.size(), kMaxPodDevices);
  EXPECT_EQ(list.too_many, 5u);
}

TEST(PluginDeviceIds, UuidIndexMigAndReplicasNameTheirGpu) {
  const auto gpus = pr_gpus();
  EXPECT_EQ(match_plugin_device("GPU-0a0a", gpus), 0);
  EXPECT_EQ(match_plugin_device("gpu-1B1B", gpus), -1);    // "GPU-" is case-sensitive
  EXPECT_EQ(match_plugin_device("GPU-1B1B", gpus), 1);     // the hex digits are not
  EXPECT_EQ(match_plugin_device("GPU-1b1b::3", gpus), 1);  // time-slicing's replica 3
  EXPECT_EQ(match_plugin_device("1", gpus), 1);            // index ids
  EXPECT_EQ(match_plugin_device("0::12", gpus), 0);
  EXPECT_EQ(match_plugin_device("1:0", gpus), 1);  // MIG with index ids: GPU 1's MIG device 0
  EXPECT_EQ(match_plugin_device("MIG-8d8d", gpus), 1);
  EXPECT_EQ(match_plugin_device("MIG-GPU-0a0a/1/0", gpus), 0);  // drivers before R470
  for (const char* unknown :
       {"GPU-ffff", "7", "7:0", "MIG-9e9e", "GPU-0a0a::x", "x:0", "", "::1"}) {
    EXPECT_EQ(match_plugin_device(unknown, gpus), -1) << unknown;
  }
}

// The MIG UUIDs the NVML probe lists (x_mig_uuids in the trace header) reach the
// matcher: a pod given a MIG slice is charged for its parent GPU.
TEST(PluginDeviceIds, MigUuidsComeFromTheTraceHeader) {
  TraceHeader h;
  DeviceInfo d;
  d.index = 3;
  d.uuid = "GPU-3c3c";
  d.extra["x_mig_uuids"] = nlohmann::json::array({"MIG-aa11", "MIG-bb22", 7});
  h.devices.push_back(d);
  const auto devices = allocation_devices(h);
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_EQ(devices[0].mig_uuids, (std::vector<std::string>{"MIG-aa11", "MIG-bb22"}));
  EXPECT_EQ(match_plugin_device("MIG-bb22", devices), 3);
  EXPECT_EQ(match_plugin_device("MIG-bb22::1", devices), 3);
}

// What `top` and the dashboard say when the scheduler's word is not in use:
// nothing on a node without the source, the reason where it failed, the error
// while an earlier answer is kept.
TEST(PodResourcesScan, FallbackNotesSayWhyOwnersComeFromProcesses) {
  AllocationScan scan;
  scan.scheduler = "kubernetes";
  scan.fallback = "no socket at /var/lib/kubelet/pod-resources/kubelet.sock";
  scan.absent = true;
  EXPECT_EQ(allocation_fallback_note(scan), "");
  scan.absent = false;
  scan.fallback = "/k.sock gave no answer within 2.0 s";
  EXPECT_EQ(allocation_fallback_note(scan),
            "pods from processes: /k.sock gave no answer within 2.0 s");
  scan.usable = true;
  EXPECT_EQ(allocation_fallback_note(scan), "");
  scan.last_error = "nothing listens on /k.sock";
  EXPECT_EQ(allocation_fallback_note(scan), "pods as last answered: nothing listens on /k.sock");
  AllocationScan slurm;
  slurm.fallback = "/run/gpulens/slurm-jobs is owned by uid 1000 with mode 777: ...";
  EXPECT_EQ(allocation_fallback_note(slurm).rfind("Slurm jobs from processes: /run/gpulens/", 0),
            0u);
}

TEST(PodResourcesScan, OneAllocationPerGpuAndContainerAndUnknownIdsCounted) {
  PodResourcesList list;
  list.pods = 3;
  list.devices = {{"ml", "train-0", "trainer", "nvidia.com/gpu", "GPU-0a0a"},
                  {"ml", "infer-1", "server", "nvidia.com/mig-1g.10gb", "MIG-7c7c"},
                  {"ml", "infer-1", "server", "nvidia.com/mig-1g.10gb", "MIG-8d8d"},
                  {"dev", "shared-a", "nb", "nvidia.com/gpu.shared", "GPU-0a0a::1"},
                  {"dev", "ghost", "nb", "nvidia.com/gpu", "GPU-dead"}};
  const AllocationScan scan = scan_from_answer(list, pr_gpus());
  EXPECT_TRUE(scan.usable);
  EXPECT_EQ(scan.scheduler, "kubernetes");
  EXPECT_EQ(scan.jobs, 3u);  // pods holding a GPU of this node
  ASSERT_EQ(scan.by_gpu.at(0).size(), 2u);
  EXPECT_EQ(scan.by_gpu.at(0)[0].pod, "train-0");
  EXPECT_EQ(scan.by_gpu.at(0)[1].pod, "shared-a");
  ASSERT_EQ(scan.by_gpu.at(1).size(), 1u);  // two MIG slices of one GPU: held once
  EXPECT_EQ(scan.by_gpu.at(1)[0].namespace_name, "ml");
  EXPECT_EQ(scan.by_gpu.at(1)[0].container, "server");
  EXPECT_EQ(scan.problems[static_cast<std::size_t>(AllocationProblem::UnknownGpu)], 1u);
  EXPECT_NE(scan.last_problem.find("GPU-dead of pod dev/ghost"), std::string::npos)
      << scan.last_problem;
}

}  // namespace
}  // namespace gpulens::sources::kube
