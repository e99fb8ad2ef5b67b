// SPDX-License-Identifier: Apache-2.0
#include "sources/host/kube_pods.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <vector>

namespace gpulens::sources {
namespace {

namespace fs = std::filesystem;

const std::string kFixtureRoot = std::string(GPULENS_FIXTURES) + "/kube/log";
const std::string kUid = "3f1b2c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d";
const std::string kStaticUid = "9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d";

std::string repeat(const std::string& pair) {
  std::string out;
  for (int i = 0; i < 32; ++i) out += pair;
  return out;
}

// A scratch copy of nothing: a root whose directories the test makes and changes.
std::string scratch_root(const std::string& name) {
  const auto dir =
      fs::path(::testing::TempDir()) / ("gpulens-kube-" + name + "-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "containers");
  fs::create_directories(dir / "pods");
  return dir.string();
}

// Sets a directory's mtime a minute back, as for a directory that changed long
// ago (a fresh mtime makes the resolver look again on purpose).
void age(const std::string& dir) {
  timespec times[2];
  clock_gettime(CLOCK_REALTIME, &times[0]);
  times[0].tv_sec -= 60;
  times[1] = times[0];
  ASSERT_EQ(utimensat(AT_FDCWD, dir.c_str(), times, 0), 0) << dir;
}

TEST(KubePods, ParsesContainerLogNames) {
  const auto id = repeat("a1");
  const auto parsed =
      parse_container_log_name("trainer-7d9f5c-abcde_ml-team_trainer-" + id + ".log");
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->first, id);
  EXPECT_EQ(parsed->second, (KubeRef{"ml-team", "trainer-7d9f5c-abcde", "trainer"}));
  // Dots are allowed in pod names (DNS subdomains), not in namespaces or containers.
  EXPECT_TRUE(parse_container_log_name("web.v2_default_app-" + id + ".log"));
  EXPECT_FALSE(parse_container_log_name("web_default.x_app-" + id + ".log"));
  EXPECT_FALSE(parse_container_log_name("web_default_app.x-" + id + ".log"));
}

TEST(KubePods, RejectsJunkContainerLogNames) {
  const auto id = repeat("a1");
  for (const std::string& junk : std::vector<std::string>{
           "README", std::string(".log"),
           "web_default_app-" + id,                     // no .log
           "web_default_app-" + id + ".log.1",          // a rotated copy
           "web_default_app-deadbeef.log",              // short ID
           "web_default_app_" + id + ".log",            // '_' before the ID
           "web_default_app-" + repeat("A1") + ".log",  // upper-case hex
           "web_default_app-" + id.substr(1) + "g.log",
           "web_default_x_app-" + id + ".log",                         // a fourth part
           "web_app-" + id + ".log",                                   // a second part only
           "Web_default_app-" + id + ".log",                           // upper case
           "web__app-" + id + ".log",                                  // empty namespace
           "web_default_-" + id + ".log",                              // empty container
           "-web_default_app-" + id + ".log",                          // leading dash
           "web_default_" + std::string(64, 'c') + "-" + id + ".log",  // 64-character label
       }) {
    EXPECT_FALSE(parse_container_log_name(junk)) << junk;
  }
}

TEST(KubePods, ParsesPodLogDirNames) {
  const auto parsed = parse_pod_log_dir_name("ml-team_trainer-7d9f5c-abcde_" + kUid);
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->first, kUid);
  EXPECT_EQ(parsed->second, (KubeRef{"ml-team", "trainer-7d9f5c-abcde", ""}));
  // Static pods: the UID is the manifest's hash, 32 hex digits.
  EXPECT_TRUE(parse_pod_log_dir_name("kube-system_etcd-node-1_" + kStaticUid));
  for (const std::string& junk :
       std::vector<std::string>{"README", "ns_pod", "ns_pod_" + kUid + "_x", "ns_pod_NOT-A-UID",
                                "ns_pod_" + kUid.substr(1), "NS_pod_" + kUid, "ns__" + kUid,
                                "ns_pod_3F1B2C4D-5E6F-4A7B-8C9D-0E1F2A3B4C5D"}) {
    EXPECT_FALSE(parse_pod_log_dir_name(junk)) << junk;
  }
}

TEST(KubePods, ResolvesTheFixtureNode) {
  KubePodResolver r(kFixtureRoot);
  r.refresh();
  EXPECT_TRUE(r.kubernetes());
  EXPECT_EQ(r.by_container(repeat("a1")), (KubeRef{"ml-team", "trainer-7d9f5c-abcde", "trainer"}));
  EXPECT_EQ(r.by_container(repeat("b2")), (KubeRef{"ml-team", "trainer-7d9f5c-abcde", "sidecar"}));
  EXPECT_EQ(r.by_container(repeat("c3")), (KubeRef{"kube-system", "etcd-node-1", "etcd"}));
  // A dangling link still names its container: the names are in the link's own name.
  EXPECT_EQ(r.by_container(repeat("d4")), (KubeRef{"default", "gone-pod", "app"}));
  EXPECT_FALSE(r.by_container(repeat("e5")));
  EXPECT_EQ(r.by_pod(kUid), (KubeRef{"ml-team", "trainer-7d9f5c-abcde", ""}));
  EXPECT_EQ(r.by_pod(kStaticUid), (KubeRef{"kube-system", "etcd-node-1", ""}));
  EXPECT_FALSE(r.by_pod("00000000-0000-0000-0000-000000000000"));
  // The junk entries of the fixture named nothing.
  EXPECT_FALSE(r.by_container("deadbeef"));
}

TEST(KubePods, MissingDirectoriesAreNotKubernetes) {
  KubePodResolver r(::testing::TempDir() + "/gpulens-no-such-kubelet-logs");
  r.refresh();
  EXPECT_FALSE(r.kubernetes());
  EXPECT_FALSE(r.by_container(repeat("a1")));
  EXPECT_FALSE(r.by_pod(kUid));
  EXPECT_EQ(r.listings(), 0u);
  KubePodResolver unset("");
  unset.refresh();
  EXPECT_FALSE(unset.kubernetes());
}

TEST(KubePods, ListsAgainOnlyWhenADirectoryChanged) {
  const auto root = scratch_root("refresh");
  const auto id = repeat("a1");
  age(root + "/containers");
  age(root + "/pods");
  const std::chrono::seconds recheck(5);
  KubePodResolver r(root, recheck);
  auto now = KubePodResolver::Clock::now();
  r.refresh(now);
  EXPECT_EQ(r.listings(), 2u);
  EXPECT_TRUE(r.kubernetes());
  EXPECT_FALSE(r.by_container(id));

  // Nothing changed: looking again lists nothing.
  now += recheck;
  r.refresh(now);
  EXPECT_EQ(r.listings(), 2u);

  // A new container: seen at the next look, not before `recheck` has passed.
  std::ofstream(root + "/containers/job-1_default_main-" + id + ".log");
  r.refresh(now + std::chrono::seconds(1));
  EXPECT_FALSE(r.by_container(id));
  now += recheck;
  r.refresh(now);
  EXPECT_EQ(r.by_container(id), (KubeRef{"default", "job-1", "main"}));
  EXPECT_EQ(r.listings(), 3u) << "only the containers directory changed";

  // Its mtime was fresh when listed, so the next look lists again (a change in the
  // same timestamp tick would not show); once aged, the looks stop listing.
  now += recheck;
  r.refresh(now);
  EXPECT_EQ(r.listings(), 4u);
  age(root + "/containers");
  now += recheck;
  r.refresh(now);
  const auto settled = r.listings();
  now += recheck;
  r.refresh(now);
  EXPECT_EQ(r.listings(), settled);

  // The container goes: its names go with it.
  fs::remove(root + "/containers/job-1_default_main-" + id + ".log");
  now += recheck;
  r.refresh(now);
  EXPECT_FALSE(r.by_container(id));

  // The directories go (a node leaving Kubernetes, an unmounted volume).
  fs::remove_all(root);
  now += recheck;
  r.refresh(now);
  EXPECT_FALSE(r.kubernetes());
}

}  // namespace
}  // namespace gpulens::sources
