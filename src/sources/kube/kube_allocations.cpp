// SPDX-License-Identifier: Apache-2.0
#include "sources/kube/kube_allocations.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <set>
#include <tuple>

#include "sources/kube/grpc_unary.hpp"

namespace gpulens::sources::kube {
namespace {

double steady_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::shared_ptr<AllocationScan> unusable(std::string why) {
  auto scan = std::make_shared<AllocationScan>();
  scan->scheduler = "kubernetes";
  scan->fallback = std::move(why);
  return scan;
}

void count(AllocationScan& scan, AllocationProblem p, std::size_t n, std::string words) {
  if (n == 0) return;
  scan.problems[static_cast<std::size_t>(p)] += n;
  scan.last_problem = std::move(words);
}

}  // namespace

std::optional<std::string> untrusted_socket(const std::string& path, std::uint32_t trusted_uid) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return fmt::format("{}{}", kNoSocketError, path);
    return fmt::format("cannot look at {}: {}", path, std::strerror(errno));
  }
  if (!S_ISSOCK(st.st_mode))
    return fmt::format("{} is not a socket (a link is not followed)", path);
  if (st.st_uid != trusted_uid) {
    return fmt::format("{} is owned by uid {}: only a socket of uid {} names pods", path, st.st_uid,
                       trusted_uid);
  }
  // Whoever can write the directory can put another socket in its place.
  const auto slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "."
                          : slash == 0               ? "/"
                                                     : path.substr(0, slash);
  struct stat ds {};
  if (::stat(dir.c_str(), &ds) != 0 || ds.st_uid != trusted_uid ||
      (ds.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return fmt::format("{} is not a directory of uid {} that no one else can write", dir,
                       trusted_uid);
  }
  return std::nullopt;
}

AllocationScan scan_from_answer(const PodResourcesList& list,
                                const std::vector<AllocationDevice>& devices) {
  AllocationScan scan;
  scan.scheduler = "kubernetes";
  scan.usable = true;
  count(scan, AllocationProblem::Malformed, list.malformed,
        "a pod, container or device id that is not a Kubernetes name was skipped");
  count(scan, AllocationProblem::TooMany, list.too_many,
        fmt::format("more than {} NVIDIA devices assigned; the rest were skipped", kMaxPodDevices));
  // One allocation per GPU and container: a container given two MIG slices or two
  // replicas of one GPU holds that GPU once.
  std::set<std::tuple<int, std::string, std::string, std::string>> seen;
  std::set<std::pair<std::string, std::string>> pods;
  for (const auto& d : list.devices) {
    const int gpu = match_plugin_device(d.device_id, devices);
    if (gpu < 0) {
      count(scan, AllocationProblem::UnknownGpu, 1,
            fmt::format("{} of pod {}/{} names no GPU of this node", d.device_id, d.namespace_name,
                        d.pod));
      continue;
    }
    if (!seen.emplace(gpu, d.namespace_name, d.pod, d.container).second) continue;
    pods.emplace(d.namespace_name, d.pod);
    GpuAllocation a;
    a.scheduler = "kubernetes";
    a.namespace_name = d.namespace_name;
    a.pod = d.pod;
    a.container = d.container;
    scan.by_gpu[gpu].push_back(std::move(a));
  }
  scan.jobs = pods.size();
  return scan;
}

KubeAllocationReader::KubeAllocationReader(KubeAllocationOptions options,
                                           std::vector<AllocationDevice> devices, GrpcCaller caller)
    : options_(std::move(options)),
      devices_(std::move(devices)),
      caller_(std::move(caller)),
      current_(unusable("the kubelet's pod-resources API was not asked yet")) {
  if (!caller_) {
    caller_ = [uid = options_.trusted_uid](const GrpcCall& call) -> Result<std::string> {
      if (auto why = untrusted_socket(call.socket_path, uid)) return Error{std::move(*why)};
      return grpc_unary_call(call);
    };
  }
  if (::pipe2(cancel_, O_CLOEXEC | O_NONBLOCK) != 0) {
    current_ = unusable("cannot create a pipe for the pod-resources thread");
    return;
  }
  thread_ = std::thread(&KubeAllocationReader::loop, this);
}

KubeAllocationReader::~KubeAllocationReader() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  if (cancel_[1] >= 0) {
    const char byte = 1;
    [[maybe_unused]] const auto n = ::write(cancel_[1], &byte, 1);
  }
  if (thread_.joinable()) thread_.join();
  for (const int fd : cancel_) {
    if (fd >= 0) ::close(fd);
  }
}

std::shared_ptr<const AllocationScan> KubeAllocationReader::read() const {
  std::lock_guard lock(mutex_);
  return current_;
}

std::uint64_t KubeAllocationReader::calls() const {
  std::lock_guard lock(mutex_);
  return calls_;
}

std::shared_ptr<const AllocationScan> KubeAllocationReader::call_once() {
  GrpcCall call;
  call.socket_path = options_.socket;
  call.method = kPodResourcesListMethod;
  call.deadline = std::chrono::milliseconds(static_cast<long>(options_.deadline_s * 1000));
  call.max_answer_bytes = kMaxPodResourcesBytes;
  call.cancel_fd = cancel_[0];
  const double start = steady_s();
  const auto answer = caller_(call);
  const double took = steady_s() - start;
  std::string error;
  if (answer) {
    PodResourcesList list;
    if (parse_pod_resources_list(*answer, list)) {
      auto scan = std::make_shared<AllocationScan>(scan_from_answer(list, devices_));
      scan->call_s = took;
      last_good_ = scan;
      last_good_at_ = steady_s();
      return scan;
    }
    error = fmt::format("{} answered {} bytes that are not a ListPodResourcesResponse",
                        options_.socket, answer->size());
  } else {
    error = answer.error().message;
  }
  // A missed answer keeps the last one for a while: one slow call must not
  // charge every held GPU to nobody for a tick.
  if (last_good_ && steady_s() - last_good_at_ <= options_.keep_s) {
    auto scan = std::make_shared<AllocationScan>(*last_good_);
    scan->last_error = error;
    return scan;
  }
  auto scan = unusable(error);
  // No kubelet socket: not a Kubernetes node (or no mount), not a failure to warn of.
  scan->absent = std::string_view(error).starts_with(kNoSocketError);
  return scan;
}

void KubeAllocationReader::loop() {
  const auto period = std::chrono::duration<double>(options_.period_s);
  for (;;) {
    auto scan = call_once();
    std::unique_lock lock(mutex_);
    if (stop_) return;
    current_ = std::move(scan);
    ++calls_;
    cv_.notify_all();
    if (cv_.wait_for(lock, period, [&] { return stop_; })) return;
  }
}

}  // namespace gpulens::sources::kube
