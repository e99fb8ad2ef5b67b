// SPDX-License-Identifier: Apache-2.0
// The per-GPU series a fleet needs: the process count (allocation without a
// series per process), the price gauge and the pod labels of a GPU one pod holds.
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "exposition/exposition.hpp"
#include "server_support.hpp"

namespace gpulens::exposition {
namespace {

ProcessSample in_pod(std::uint32_t pid, const std::string& uid, double mib) {
  ProcessSample p;
  p.pid = pid;
  p.name = "python";
  p.pod = uid;
  p.used_mib = mib;
  return p;
}

TEST(FleetMetrics, ProcessCountPerGpu) {
  auto snap = gpulens::testing::fixed_snapshot();
  snap.gpus[1].sample->procs = std::vector<ProcessSample>{};
  std::string out;
  render_gpu_metrics(out, snap);
  EXPECT_NE(out.find("# TYPE gpulens_gpu_processes gauge"), std::string::npos);
  EXPECT_NE(out.find("gpulens_gpu_processes{gpu=\"0\""), std::string::npos);
  EXPECT_NE(out.find("gpulens_gpu_processes{gpu=\"1\",uuid=\"GPU-00000001\",model=\"NVIDIA H100 "
                     "80GB HBM3\",hostname=\"node-17\"} 0\n"),
            std::string::npos)
      << out;
  // Not sampled is not "none": no series.
  snap.gpus[1].sample->procs.reset();
  out.clear();
  render_gpu_metrics(out, snap);
  EXPECT_EQ(out.find("gpulens_gpu_processes{gpu=\"1\""), std::string::npos);
}

TEST(FleetMetrics, PriceGaugePerGpuOnlyWhereAPriceIsKnown) {
  auto snap = gpulens::testing::fixed_snapshot();
  ExpositionOptions o;
  std::string out;
  render_price_metrics(out, snap, o);
  EXPECT_TRUE(out.empty());
  // GPU 1 is another model, with no price: no series for it, not a 0.
  snap.gpus[1].device.name = "Unknown GPU";
  o.price_of = [](const std::string& name) -> std::optional<GpuPrice> {
    if (name == "NVIDIA H100 80GB HBM3") return GpuPrice{2.5, "EUR"};
    return std::nullopt;
  };
  render_price_metrics(out, snap, o);
  EXPECT_NE(out.find("gpulens_gpu_price_per_hour{gpu=\"0\",uuid=\"GPU-00000000\",model=\"NVIDIA "
                     "H100 80GB HBM3\",hostname=\"node-17\",currency=\"EUR\"} 2.5\n"),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find("gpu=\"1\""), std::string::npos) << out;
  EXPECT_EQ(out.find("# TYPE gpulens_gpu_price_per_hour gauge"),
            out.rfind("# TYPE gpulens_gpu_price_per_hour gauge"));
}

TEST(FleetMetrics, PodLabelsOnlyWhenOnePodHoldsTheGpu) {
  auto snap = gpulens::testing::fixed_snapshot();
  snap.kube.kubernetes = true;
  snap.kube.by_pod["uid-a"] = sources::KubeRef{"team-a", "train-0", ""};
  snap.kube.by_pod["uid-b"] = sources::KubeRef{"team-b", "serve-0", ""};
  auto& procs = *snap.gpus[0].sample->procs;
  procs = {in_pod(1, "uid-a", 1000), in_pod(2, "uid-a", 10), in_pod(3, "", 5)};
  EXPECT_NE(gpu_labels(snap, snap.gpus[0]).find(",namespace=\"team-a\",pod=\"train-0\""),
            std::string::npos);
  // A second pod on the same GPU (time-slicing): neither is named.
  procs.push_back(in_pod(4, "uid-b", 1));
  EXPECT_EQ(gpu_labels(snap, snap.gpus[0]).find("pod="), std::string::npos);
  // Off Kubernetes: never a pod label.
  procs = {in_pod(1, "uid-a", 1000)};
  snap.kube.kubernetes = false;
  EXPECT_EQ(gpu_labels(snap, snap.gpus[0]).find("pod="), std::string::npos);
}

// A GPU a pod holds (the kubelet's pod-resources API): the 0/1 gauge keeps the
// GPU's own labels, the info series alone carries namespace, pod and container;
// a Slurm job's info series carries Slurm's labels and no pod's.
TEST(FleetMetrics, AllocationSeriesNameTheirPodOrJob) {
  auto snap = gpulens::testing::fixed_snapshot();
  GpuAllocation pod;
  pod.scheduler = "kubernetes";
  pod.namespace_name = "ml";
  pod.pod = "idle-1";
  pod.container = "notebook";
  const GpuAllocation job{"slurm", "41", "alice", "physics", "gpu", 1.0, "", "", ""};
  snap.gpus[0].sample->allocations = std::vector<GpuAllocation>{pod};
  snap.gpus[1].sample->allocations = std::vector<GpuAllocation>{job};
  std::string out;
  render_allocation_metrics(out, snap);
  const std::string gpu0 =
      R"(gpu="0",uuid="GPU-00000000",model="NVIDIA H100 80GB HBM3",hostname="node-17")";
  EXPECT_NE(out.find("gpulens_gpu_allocated{" + gpu0 + "} 1\n"), std::string::npos) << out;
  EXPECT_NE(
      out.find("gpulens_gpu_allocation_info{" + gpu0 +
               R"(,scheduler="kubernetes",namespace="ml",pod="idle-1",container="notebook"} 1)"),
      std::string::npos)
      << out;
  EXPECT_NE(out.find(R"(,scheduler="slurm",slurm_job="41",slurm_user="alice",)"
                     R"(slurm_account="physics",slurm_partition="gpu"} 1)"),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find("slurm_job=\"\""), std::string::npos) << out;
}

}  // namespace
}  // namespace gpulens::exposition
