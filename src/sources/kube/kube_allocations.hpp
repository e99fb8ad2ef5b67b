// SPDX-License-Identifier: Apache-2.0
#pragma once
// Which pod holds which GPU, from the kubelet's pod-resources API (docs/kubernetes.md,
// "Allocation"): unlike the processes on a GPU, this sees a pod that holds a GPU
// and runs nothing on it. The call runs on a thread of its own with a deadline,
// so a slow, hung or absent kubelet never delays a tick; the sampler takes the
// last answer. When the kubelet does not answer, an answer younger than
// `keep_s` is still used (and the error said); after that the GPUs' owners come
// from processes alone, with the reason in /api/v1/health.
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/result.hpp"
#include "sources/host/slurm_allocations.hpp"
#include "sources/kube/grpc_unary.hpp"
#include "sources/kube/pod_resources.hpp"

namespace gpulens::sources::kube {

inline constexpr const char* kDefaultPodResourcesSocket =
    "/var/lib/kubelet/pod-resources/kubelet.sock";
inline constexpr const char* kPodResourcesListMethod = "/v1.PodResourcesLister/List";

struct KubeAllocationOptions {
  std::string socket;  // empty: not read
  double period_s = 5;
  double deadline_s = 2;
  // How long an answer stays in use while the kubelet does not answer: a
  // restarting kubelet (seconds) keeps the pods; one gone for good does not.
  double keep_s = 30;
  // Only a socket of this uid, in a directory no one else can write, names pods:
  // anyone else's would let them charge GPUs to pods of their choosing. Tests
  // run as themselves; the agent trusts root, the kubelet's user.
  std::uint32_t trusted_uid = 0;
};

// The call itself, replaceable in tests; by default untrusted_socket's check,
// then grpc_unary_call.
using GrpcCaller = std::function<Result<std::string>(const GrpcCall&)>;

// Why the socket at `path` names no owners (not a socket, a link, another
// uid's, in a directory others can write); nullopt when it may be asked. An
// absent socket reads as kNoSocketError, as the call would say.
std::optional<std::string> untrusted_socket(const std::string& path, std::uint32_t trusted_uid);

// The scan one answer gives: GPUs by NVML index, the pods holding each.
AllocationScan scan_from_answer(const PodResourcesList& list,
                                const std::vector<AllocationDevice>& devices);

class KubeAllocationReader {
 public:
  KubeAllocationReader(KubeAllocationOptions options, std::vector<AllocationDevice> devices,
                       GrpcCaller caller = {});
  ~KubeAllocationReader();
  KubeAllocationReader(const KubeAllocationReader&) = delete;
  KubeAllocationReader& operator=(const KubeAllocationReader&) = delete;

  // The last scan (never null): until the first call ends, an unusable one that
  // says so.
  std::shared_ptr<const AllocationScan> read() const;
  // Calls made so far (tests wait on it).
  std::uint64_t calls() const;

 private:
  void loop();
  std::shared_ptr<const AllocationScan> call_once();

  KubeAllocationOptions options_;
  std::vector<AllocationDevice> devices_;
  GrpcCaller caller_;
  int cancel_[2] = {-1, -1};  // a pipe: writing to it abandons a call in flight
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::uint64_t calls_ = 0;
  std::shared_ptr<const AllocationScan> current_;
  std::shared_ptr<const AllocationScan> last_good_;
  double last_good_at_ = 0;  // steady seconds
  std::thread thread_;
};

}  // namespace gpulens::sources::kube
