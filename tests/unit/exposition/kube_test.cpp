// SPDX-License-Identifier: Apache-2.0
// Kubernetes names in /metrics: the snapshot builder looks them up from a
// kubelet log tree (tests/fixtures/kube/log), dcgm compat labels GPU series with
// the pod on the GPU, and per-process series carry the names next to the IDs.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "agent/snapshot.hpp"
#include "cli_support.hpp"
#include "diagnosis/config.hpp"
#include "diagnosis/engine.hpp"
#include "exposition/api_json.hpp"
#include "exposition/exposition.hpp"
#include "server_support.hpp"

namespace gpulens::exposition {
namespace {

const std::string kRoot = std::string(GPULENS_FIXTURES) + "/kube/log";
const std::string kUid = "3f1b2c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d";
const std::string kStaticUid = "9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d";

std::string id(const std::string& pair) {
  std::string out;
  for (int i = 0; i < 32; ++i) out += pair;
  return out;
}

ProcessSample proc(std::uint32_t pid, std::string container, std::string pod, double mib) {
  ProcessSample p;
  p.pid = pid;
  p.name = "python";
  p.container = std::move(container);
  p.pod = std::move(pod);
  p.used_mib = mib;
  p.sm_util = 10;
  return p;
}

TraceHeader header() {
  TraceHeader h;
  h.host = "node-17";
  h.driver = "580.159.04";
  h.interval_s = 1.0;
  for (int i = 0; i < 2; ++i) {
    DeviceInfo d;
    d.index = i;
    d.uuid = "GPU-" + std::to_string(i);
    d.name = "NVIDIA H100 80GB HBM3";
    d.mem_total_mib = 81559;
    h.devices.push_back(d);
  }
  return h;
}

// GPU 0: the trainer pod's two containers and a host process holding more memory
// than either (not in a pod: it names nothing). GPU 1: a static pod known only by
// its UID, and a container the kubelet's logs do not name.
Tick tick() {
  Tick t;
  t.t = 1732200000;
  for (int g = 0; g < 2; ++g) {
    Sample s;
    s.t = t.t;
    s.gpu = g;
    s.values.set(Metric::GpuUtil, 50);
    s.values.set(Metric::MemUsedMib, 1000);
    if (g == 0) {
      s.procs =
          std::vector<ProcessSample>{proc(101, id("a1"), kUid, 30000),
                                     proc(102, id("b2"), kUid, 100), proc(103, "", "", 50000)};
    } else {
      s.procs =
          std::vector<ProcessSample>{proc(201, "", kStaticUid, 10), proc(202, id("e5"), "", 20000)};
    }
    t.samples.push_back(std::move(s));
  }
  return t;
}

agent::SnapshotPtr build(sources::KubePodResolver* resolver) {
  const auto h = header();
  agent::SnapshotBuilder builder(h, "", false);
  if (resolver != nullptr) builder.use_kube(resolver);
  diagnosis::DiagnosisEngine engine(h, diagnosis::DiagnosisConfig::defaults());
  const Tick t = tick();
  engine.on_tick(t);
  return builder.build(t, engine, {}, agent::SourceHealth{});
}

std::string dcgm(const agent::LiveSnapshot& snap) {
  std::string out;
  render_dcgm_metrics(out, snap);
  return out;
}

std::string processes(const agent::LiveSnapshot& snap) {
  std::string out;
  render_process_metrics(out, snap);
  return out;
}

TEST(KubeExposition, SnapshotNamesThePodsOfTheProcesses) {
  sources::KubePodResolver resolver(kRoot);
  const auto snap = build(&resolver);
  EXPECT_TRUE(snap->kube.kubernetes);
  EXPECT_EQ(snap->kube.by_container.size(), 2u);  // the unknown container is not there
  EXPECT_EQ(snap->kube.by_pod.size(), 2u);
  ASSERT_EQ(snap->gpus.size(), 2u);
  EXPECT_EQ(agent::kube_of_gpu(*snap, snap->gpus[0]),
            (sources::KubeRef{"ml-team", "trainer-7d9f5c-abcde", "trainer"}));
  EXPECT_EQ(agent::kube_of_gpu(*snap, snap->gpus[1]),
            (sources::KubeRef{"kube-system", "etcd-node-1", ""}));
}

TEST(KubeExposition, DcgmGpuSeriesCarryThePodLabels) {
  sources::KubePodResolver resolver(kRoot);
  const auto text = dcgm(*build(&resolver));
  EXPECT_NE(text.find("DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-0\",device=\"nvidia0\","
                      "modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"node-17\","
                      "DCGM_FI_DRIVER_VERSION=\"580.159.04\",container=\"trainer\","
                      "namespace=\"ml-team\",pod=\"trainer-7d9f5c-abcde\"} 50\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("DCGM_FI_DEV_FB_USED{gpu=\"1\",UUID=\"GPU-1\",device=\"nvidia1\","
                      "modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"node-17\","
                      "DCGM_FI_DRIVER_VERSION=\"580.159.04\",container=\"\","
                      "namespace=\"kube-system\",pod=\"etcd-node-1\"} 1000\n"),
            std::string::npos)
      << text;
}

TEST(KubeExposition, ProcessSeriesCarryNamesNextToIds) {
  sources::KubePodResolver resolver(kRoot);
  const auto text = processes(*build(&resolver));
  EXPECT_NE(text.find("pid=\"101\",process=\"python\",container_id=\"" + id("a1") +
                      "\",pod_uid=\"" + kUid +
                      "\",namespace=\"ml-team\",pod=\"trainer-7d9f5c-abcde\","
                      "container=\"trainer\",slurm_job=\"\",slurm_step=\"\",slurm_account=\"\"}"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("pid=\"201\",process=\"python\",container_id=\"\",pod_uid=\"" + kStaticUid +
                      "\",namespace=\"kube-system\",pod=\"etcd-node-1\",container=\"\","
                      "slurm_job=\"\",slurm_step=\"\",slurm_account=\"\"}"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("pid=\"202\",process=\"python\",container_id=\"" + id("e5") +
                      "\",pod_uid=\"\",namespace=\"\",pod=\"\",container=\"\","
                      "slurm_job=\"\",slurm_step=\"\",slurm_account=\"\"}"),
            std::string::npos)
      << text;
}

TEST(KubeExposition, LatestApiNamesThePodsOfProcesses) {
  sources::KubePodResolver resolver(kRoot);
  const auto latest = latest_json(*build(&resolver), /*show_cmdline=*/false);
  const auto& procs = latest["gpus"][0]["processes"];
  ASSERT_TRUE(procs.is_array()) << latest.dump(2);
  bool named = false;
  for (const auto& p : procs) {
    if (p["pid"] != 101) continue;
    named = true;
    EXPECT_EQ(p["container"], id("a1"));  // the ID stays where it was
    EXPECT_EQ(p["kube"]["namespace"], "ml-team");
    EXPECT_EQ(p["kube"]["pod"], "trainer-7d9f5c-abcde");
    EXPECT_EQ(p["kube"]["container"], "trainer");
  }
  EXPECT_TRUE(named) << latest.dump(2);
  // A process in no known pod has no "kube" object rather than empty names.
  bool unnamed = false;
  for (const auto& p : latest["gpus"][1]["processes"]) {
    if (p["pid"] != 202) continue;
    unnamed = true;
    EXPECT_FALSE(p.contains("kube")) << p.dump();
  }
  EXPECT_TRUE(unnamed) << latest.dump(2);
}

TEST(KubeExposition, NoPodLabelsOffKubernetes) {
  // No kubelet logs under the root: dcgm-exporter without its kubelet socket
  // adds no pod labels either. Per-process series keep their label set, empty.
  sources::KubePodResolver missing(::testing::TempDir() + "/gpulens-no-kubelet-logs");
  for (const auto& snap : {build(&missing), build(nullptr)}) {
    EXPECT_FALSE(snap->kube.kubernetes);
    const auto text = dcgm(*snap);
    EXPECT_EQ(text.find("namespace="), std::string::npos);
    EXPECT_EQ(text.find("pod="), std::string::npos);
    EXPECT_NE(processes(*snap).find("pid=\"101\",process=\"python\",container_id=\"" + id("a1") +
                                    "\",pod_uid=\"" + kUid +
                                    "\",namespace=\"\",pod=\"\",container=\"\","
                                    "slurm_job=\"\",slurm_step=\"\",slurm_account=\"\"}"),
              std::string::npos);
  }
}

TEST(KubeExposition, AGpuWithoutPodsGetsEmptyLabels) {
  // On a Kubernetes node, a GPU no pod uses: empty values, as dcgm-exporter writes.
  auto snap = gpulens::testing::fixed_snapshot();
  snap.kube.kubernetes = true;
  const auto text = dcgm(snap);
  EXPECT_NE(text.find("DCGM_FI_DRIVER_VERSION=\"580.159.04\",container=\"\",namespace=\"\","
                      "pod=\"\"} "),
            std::string::npos)
      << text;
}

TEST(KubeExposition, SeveralPodsOnOneGpuNameTheLargest) {
  auto snap = gpulens::testing::fixed_snapshot();
  snap.kube.kubernetes = true;
  snap.kube.by_pod["uid-small"] = sources::KubeRef{"team-a", "small", ""};
  snap.kube.by_pod["uid-big"] = sources::KubeRef{"team-b", "big", ""};
  snap.kube.by_container["c-big-1"] = sources::KubeRef{"team-b", "big", "worker"};
  auto& procs = *snap.gpus[0].sample->procs;
  procs = {proc(1, "", "uid-small", 30000), proc(2, "c-big-1", "uid-big", 20000),
           proc(3, "", "uid-big", 15000)};
  // 35,000 MiB for big (two processes) against 30,000 for small.
  EXPECT_EQ(agent::kube_of_gpu(snap, snap.gpus[0]), (sources::KubeRef{"team-b", "big", "worker"}));
  procs[0].used_mib = 40000;
  EXPECT_EQ(agent::kube_of_gpu(snap, snap.gpus[0]), (sources::KubeRef{"team-a", "small", ""}));
}

TEST(KubeExposition, PromtoolAcceptsTheLabels) {
  sources::KubePodResolver resolver(kRoot);
  ExpositionOptions o;
  o.dcgm = true;
  o.process_metrics = true;
  const auto result = gpulens::testing::promtool(render_metrics(*build(&resolver), o, SelfStats{}));
  if (!result) GTEST_SKIP() << "promtool not installed (Debian: prometheus)";
  // Only dcgm-exporter's own naming may be flagged, as without the pod labels.
  gpulens::testing::expect_only_dcgm_naming_flagged(result->second);
  if (result->second.empty()) {
    EXPECT_EQ(result->first, 0);
  }
}

}  // namespace
}  // namespace gpulens::exposition
