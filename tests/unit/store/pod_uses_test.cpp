// SPDX-License-Identifier: Apache-2.0
// The history's pod table (store/pod_uses.*): the pods the kubelet says hold each
// GPU collapsed to a row per pod and GPU, spans grown by upserts, kept as long as
// the rollups, listed latest first; a file of the previous schema migrated; the
// agent's writer keeps them while the file cannot be written.
#include "store/pod_uses.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "server_support.hpp"
#include "store/history_store.hpp"
#include "store/store_writer.hpp"
#include "store_support.hpp"
#include "wait_for.hpp"

namespace gpulens::store {
namespace {

constexpr double kPodT0 = 1795200000;

GpuAllocation held_by(const std::string& ns, const std::string& pod) {
  GpuAllocation a;
  a.scheduler = "kubernetes";
  a.namespace_name = ns;
  a.pod = pod;
  a.container = "c";
  return a;
}

Sample pod_tick(int gpu, double t, std::optional<std::vector<GpuAllocation>> held) {
  Sample s;
  s.gpu = gpu;
  s.t = t;
  s.allocations = std::move(held);
  return s;
}

TEST(PodUses, OnlyTheKubeletsPodsAreKeptARowPerPodAndGpu) {
  PodUses uses;
  const GpuAllocation slurm{"slurm", "7", "alice", "", "", std::nullopt, "", "", ""};
  for (int i = 0; i < 4; ++i) {
    uses.add_samples({pod_tick(0, kPodT0 + i, std::vector{held_by("ml", "nb-0"), slurm}),
                      pod_tick(1, kPodT0 + i, std::vector{held_by("ml", "nb-0")}),
                      pod_tick(2, kPodT0 + i, std::vector<GpuAllocation>{}),
                      pod_tick(3, kPodT0 + i, std::nullopt)});
  }
  const auto rows = uses.rows();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0], (PodUse{"ml", "nb-0", 0, kPodT0, kPodT0 + 3}));
  EXPECT_EQ(rows[1], (PodUse{"ml", "nb-0", 1, kPodT0, kPodT0 + 3}));
  uses.add({"web", "old", 5, kPodT0 - 100, kPodT0 - 50});
  uses.trim(2);  // the one seen longest ago goes
  EXPECT_EQ(uses.size(), 2u);
  for (const auto& r : uses.rows()) EXPECT_NE(r.pod, "old");
}

// A history file in a scratch directory, opened by open().
class PodStoreTest : public gpulens::testing::StoreTest {};

TEST_F(PodStoreTest, SpansGrowAcrossBatchesAndTheLatestComeFirst) {
  auto store = open();
  ASSERT_TRUE(store.write_pods({{"ml", "nb-0", 1, kPodT0, kPodT0 + 10}}).ok());
  ASSERT_TRUE(store
                  .write_pods({{"ml", "nb-0", 1, kPodT0 + 10, kPodT0 + 600},
                               {"dev", "a", 0, kPodT0 + 5, kPodT0 + 20},
                               {std::string(300, 'x'), "too-long", 0, kPodT0, kPodT0}})
                  .ok());
  auto rows = pod_uses_between(store.db(), kPodT0, kPodT0 + 3600, {}, 10);
  ASSERT_TRUE(rows.ok()) << rows.error().message;
  ASSERT_EQ(rows->size(), 2u);  // not the name no Kubernetes object can have
  EXPECT_EQ((*rows)[0], (PodUse{"ml", "nb-0", 1, kPodT0, kPodT0 + 600}));
  EXPECT_EQ((*rows)[1].pod, "a");
  // A range that meets only the longer span; a limit of one.
  auto later = pod_uses_between(store.db(), kPodT0 + 100, kPodT0 + 200, {}, 10);
  ASSERT_TRUE(later.ok());
  ASSERT_EQ(later->size(), 1u);
  EXPECT_EQ((*later)[0].pod, "nb-0");
  auto one = pod_uses_between(store.db(), kPodT0, kPodT0 + 3600, {}, 1);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->size(), 1u);
  // The GPU is chosen before the limit: GPU 0's one row, though GPU 1's is later.
  auto gpu0 = pod_uses_between(store.db(), kPodT0, kPodT0 + 3600, {0}, 1);
  ASSERT_TRUE(gpu0.ok());
  ASSERT_EQ(gpu0->size(), 1u);
  EXPECT_EQ((*gpu0)[0].pod, "a");
}

TEST_F(PodStoreTest, PodsAreKeptAsLongAsTheRollups) {
  options_.raw_retention_s = 3600;
  options_.rollup_retention_s = 86400;
  auto store = open();
  StoredSample s;
  s.gpu = 0;
  s.t = kPodT0 + 86400 + 101;
  s.values.set(Metric::GpuUtil, 1);
  ASSERT_TRUE(store
                  .write_pods({{"ml", "gone", 0, kPodT0, kPodT0 + 100},
                               {"ml", "kept", 0, kPodT0, kPodT0 + 7200}})
                  .ok());
  ASSERT_TRUE(store.write({s}, {}).ok());
  ASSERT_TRUE(store.enforce_limits().ok());
  auto rows = pod_uses_between(store.db(), 0, kPodT0 + 1e6, {}, 10);
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].pod, "kept");
}

TEST_F(PodStoreTest, AFileOfSchemaThreeIsMigrated) {
  {  // What gpulens wrote before the pod table: migrations 1 to 3.
    auto db = Database::open(options_.path, false, true);
    ASSERT_TRUE(db.ok());
    for (int m = 0; m < 3; ++m) ASSERT_TRUE(db->exec(migrations()[m]).ok());
    ASSERT_TRUE(db->exec("INSERT INTO slurm_jobs VALUES (42, '0', 0, 'alice', '', 1, 2)").ok());
    ASSERT_TRUE(db->exec("PRAGMA user_version = 3").ok());
  }
  ASSERT_GE(kSchemaVersion, 4);
  auto store = open();
  EXPECT_EQ(*store.db().query_int("PRAGMA user_version"), kSchemaVersion);
  EXPECT_EQ(*store.db().query_int("SELECT job FROM slurm_jobs"), 42);
  ASSERT_TRUE(store.write_pods({{"ml", "nb-0", 0, kPodT0, kPodT0}}).ok());
  EXPECT_EQ(*store.db().query_int("SELECT COUNT(*) FROM kube_pods"), 1);
}

// Pods pushed while the history cannot be opened wait, merged, and are written
// once it can.
TEST(PodStoreWriter, KeepsPodsWhileTheFileCannotBeOpened) {
  auto blocked = gpulens::testing::blocked_history("pod-writer");
  StoreWriter writer(blocked.store, blocked.writer, [](bool, const std::string&) {});
  writer.start(TraceHeader{});
  StoredSample s;
  s.gpu = 0;
  s.t = kPodT0;
  s.values.set(Metric::GpuUtil, 0);
  PodUses first;
  first.add({"ml", "nb-0", 0, kPodT0, kPodT0 + 1});
  writer.push({s}, {}, {}, first);
  ASSERT_TRUE(gpulens::testing::wait_for([&] { return !writer.status().error.empty(); }, 20));
  PodUses second;
  second.add({"ml", "nb-0", 0, kPodT0 + 2, kPodT0 + 5});
  s.t = kPodT0 + 5;
  writer.push({s}, {}, {}, second);
  std::filesystem::remove(blocked.blocker);
  ASSERT_TRUE(gpulens::testing::wait_for([&] { return writer.status().samples_written == 2; }, 20));
  writer.stop();
  auto store = HistoryStore::open(blocked.store);
  ASSERT_TRUE(store.ok()) << store.error().message;
  auto rows = pod_uses_between(store->db(), 0, kPodT0 + 10, {}, 10);
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0], (PodUse{"ml", "nb-0", 0, kPodT0, kPodT0 + 5}));
}

}  // namespace
}  // namespace gpulens::store
