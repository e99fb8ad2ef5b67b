// SPDX-License-Identifier: Apache-2.0
// Container and pod identity from /proc/PID/cgroup, one row per runtime layout.
#include "sources/host/cgroup_parse.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

namespace gpulens::sources {
namespace {

const std::string kId = "d548c5b83fa61d8e3bd86ad42a7ffea9b7c86e3f9d8095c1577d3e1270bb9420";
const std::string kPod = "f4e2b41a-8589-5dac-abeb-5439ed42d10a";
const std::string kPodEscaped = "f4e2b41a_8589_5dac_abeb_5439ed42d10a";  // systemd slice form

struct Layout {
  const char* what;
  std::string file;
  std::string container;
  std::string pod;
};

// Its words name the case in the test list (ctest's names come from it); GoogleTest
// would print the object's bytes, pointers included, a new name every build.
void PrintTo(const Layout& layout, std::ostream* os) {
  *os << layout.what;
}

class CgroupLayouts : public ::testing::TestWithParam<Layout> {};

TEST_P(CgroupLayouts, ContainerAndPod) {
  const auto& layout = GetParam();
  const auto info = parse_pid_cgroup(layout.file);
  ASSERT_TRUE(info.ok()) << layout.what << ": " << info.error().message;
  EXPECT_EQ(info->container, layout.container) << layout.what;
  EXPECT_EQ(info->pod, layout.pod) << layout.what;
}

INSTANTIATE_TEST_SUITE_P(
    CgroupRuntimes, CgroupLayouts,
    ::testing::Values(
        Layout{"docker v1 cgroupfs",
               "12:memory:/docker/" + kId + "\n1:name=systemd:/docker/" + kId + "\n", kId, ""},
        Layout{"docker v2 systemd", "0::/system.slice/docker-" + kId + ".scope\n", kId, ""},
        Layout{"docker v1 systemd", "4:cpu,cpuacct:/system.slice/docker-" + kId + ".scope\n", kId,
               ""},
        Layout{"containerd v2 kubepods systemd",
               "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + kPodEscaped +
                   ".slice/cri-containerd-" + kId + ".scope\n",
               kId, kPod},
        Layout{"containerd v1 kubepods cgroupfs",
               "11:memory:/kubepods/burstable/pod" + kPod + "/" + kId + "\n", kId, kPod},
        Layout{"guaranteed pod cgroupfs (no QoS level)",
               "0::/kubepods/pod" + kPod + "/" + kId + "\n", kId, kPod},
        Layout{"guaranteed pod systemd",
               "0::/kubepods.slice/kubepods-pod" + kPodEscaped + ".slice/cri-containerd-" + kId +
                   ".scope\n",
               kId, kPod},
        Layout{"cri-o v2",
               "0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" +
                   kPodEscaped + ".slice/crio-" + kId + ".scope\n",
               kId, kPod},
        Layout{"cri-o conmon is not the container",
               "0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" +
                   kPodEscaped + ".slice/crio-conmon-" + kId + ".scope\n",
               "", kPod},
        Layout{"podman v2 rootless",
               "0::/user.slice/user-1000.slice/user@1000.service/user.slice/"
               "libpod-" +
                   kId + ".scope/container\n",
               kId, ""},
        Layout{"podman v1", "1:name=systemd:/machine.slice/libpod-" + kId + ".scope\n", kId, ""},
        Layout{"containerd plain (nerdctl)", "0::/default/" + kId + "\n", kId, ""},
        Layout{"static pod (hash uid)",
               "0::/kubepods.slice/kubepods-burstable.slice/"
               "kubepods-burstable-pod0123456789abcdef0123456789abcdef.slice/cri-containerd-" +
                   kId + ".scope\n",
               kId, "0123456789abcdef0123456789abcdef"},
        Layout{"pod-level cgroup, no container", "0::/kubepods/burstable/pod" + kPod + "\n", "",
               kPod},
        Layout{"kind: kubernetes inside a docker container",
               "0::/system.slice/docker-" + std::string(64, 'a') + ".scope/kubepods/burstable/pod" +
                   kPod + "/" + kId + "\n",
               kId, kPod},
        Layout{"removed cgroup", "0::/system.slice/docker-" + kId + ".scope (deleted)\n", kId, ""},
        Layout{"systemd user session", "0::/user.slice/user-1000.slice/session-3.scope\n", "", ""},
        Layout{"systemd service", "0::/system.slice/sshd.service\n", "", ""},
        Layout{"systemd-run transient scope",
               "0::/system.slice/run-r0123456789abcdef0123456789abcdef.scope\n", "", ""},
        Layout{"root cgroup (inside a namespace)", "0::/\n", "", ""},
        Layout{"v1 root everywhere", "9:name=systemd:/\n4:memory:/\n0::/\n", "", ""},
        Layout{"v1 controllers disagree: first container wins",
               "12:pids:/\n11:memory:/docker/" + kId + "\n0::/\n", kId, ""},
        Layout{"short hex is not a container id", "0::/docker/abc123\n", "", ""},
        Layout{"bad pod uid", "0::/kubepods/burstable/podnot-a-uid/" + kId + "\n", kId, ""},
        Layout{"empty file (no cgroups)", "", "", ""},
        Layout{"no trailing newline", "0::/system.slice/docker-" + kId + ".scope", kId, ""}));

TEST(CgroupParse, FixtureFiles) {
  const auto read = [](const std::string& rel) {
    std::ifstream in(std::string(GPULENS_FIXTURES) + "/proc/" + rel);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  const auto docker = parse_pid_cgroup(read("t0/1001/cgroup"));
  ASSERT_TRUE(docker.ok());
  EXPECT_EQ(docker->container, kId);
  const auto containerd = parse_pid_cgroup(read("t0/1003/cgroup"));
  ASSERT_TRUE(containerd.ok());
  EXPECT_EQ(containerd->container,
            "2397d068a8d1552a4c3f9147ba9c94e086bfd66fb2acb5bbaf47197105127d5f");
  EXPECT_EQ(containerd->pod, kPod);
  const auto crio = parse_pid_cgroup(read("t0/1004/cgroup"));
  ASSERT_TRUE(crio.ok());
  EXPECT_EQ(crio->container, "c64064614423cb790e88b3e5492ff5ccf673b25ae823089f7a60c65cda24d809");
  EXPECT_EQ(crio->pod, "8683adea-a445-598d-89db-04bc27c8debe");
  const auto slice = parse_pid_cgroup(read("t0/1005/cgroup"));
  ASSERT_TRUE(slice.ok());
  EXPECT_EQ(*slice, CgroupInfo{});
}

TEST(CgroupParse, MalformedInputIsAnError) {
  for (const std::string& bad : std::vector<std::string>{
           "garbage\n",
           "0:/docker\n",         // one colon
           "x::/system.slice\n",  // hierarchy not a number
           "::/system.slice\n",
           "0::system.slice\n",  // relative path
           "0::\n",
           "0::/\nnot a cgroup line\n",
       }) {
    EXPECT_FALSE(parse_pid_cgroup(bad).ok()) << bad;
  }
}

TEST(CgroupParse, PathAlone) {
  EXPECT_EQ(parse_cgroup_path("/docker/" + kId).container, kId);
  EXPECT_EQ(parse_cgroup_path("").container, "");
  EXPECT_EQ(parse_cgroup_path("////").pod, "");
}

}  // namespace
}  // namespace gpulens::sources
