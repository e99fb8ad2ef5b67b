// SPDX-License-Identifier: Apache-2.0
// Fuzz target: the /proc and cgroup files the host collector reads.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "sources/host/cgroup_parse.hpp"
#include "sources/host/kube_pods.hpp"
#include "sources/host/procfs_parse.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)gpulens::sources::parse_proc_stat(text);
  (void)gpulens::sources::parse_meminfo(text);
  (void)gpulens::sources::parse_pid_stat(text);
  (void)gpulens::sources::parse_pid_status(text);
  (void)gpulens::sources::parse_cmdline(text);
  (void)gpulens::sources::parse_ns_inode(text);
  (void)gpulens::sources::parse_pid_cgroup(text);
  (void)gpulens::sources::parse_cgroup_path(text);
  (void)gpulens::sources::parse_container_log_name(text);
  (void)gpulens::sources::parse_pod_log_dir_name(text);
  return 0;
}
