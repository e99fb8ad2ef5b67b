// SPDX-License-Identifier: Apache-2.0
#pragma once
// The agent's sampling loop: ticks from the source (live GPUs or a replay) go
// through the diagnosis engine, become the published snapshot, and are queued
// for history. One thread; everything else reads the snapshot.
#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "agent/snapshot.hpp"
#include "diagnosis/config.hpp"
#include "diagnosis/engine.hpp"
#include "sources/tick_source.hpp"
#include "store/store_writer.hpp"

namespace gpulens::agent {

struct AgentOptions {
  diagnosis::DiagnosisConfig diagnosis = diagnosis::DiagnosisConfig::defaults();
  std::string hostname;  // empty: the source's host name
  bool keep_cmdline = false;
  std::string source_description;
  // Root of the kubelet's logs (containers/, pods/) that names the pods of the
  // processes; empty: no names.
  std::string kube_log_dir;
};

class Agent {
 public:
  // `writer` may be null (history disabled); it must outlive the agent.
  Agent(std::unique_ptr<sources::TickSource> source, AgentOptions options,
        store::StoreWriter* writer);
  ~Agent();
  Agent(const Agent&) = delete;
  Agent& operator=(const Agent&) = delete;

  void start();
  // Asks the source to stop and waits for the loop to finish.
  void stop();
  // Blocks until the loop has ended (stop(), the end of a replay, a failure).
  void join();
  bool running() const { return running_; }

  SnapshotPtr snapshot() const;
  const TraceHeader& header() const { return source_->header(); }
  // Replaces the diagnosis settings from the next tick on (SIGHUP). Windows and
  // alert states start afresh under the new settings.
  void reload(diagnosis::DiagnosisConfig config);

 private:
  void loop();
  void publish(SnapshotPtr snap);

  std::unique_ptr<sources::TickSource> source_;
  AgentOptions options_;
  store::StoreWriter* writer_;
  diagnosis::DiagnosisEngine engine_;
  std::unique_ptr<sources::KubePodResolver> kube_;  // before builder_, which points to it
  SnapshotBuilder builder_;
  std::thread thread_;
  std::mutex join_mutex_;
  std::atomic<bool> running_{false};

  mutable std::mutex mutex_;
  SnapshotPtr snapshot_;
  std::optional<diagnosis::DiagnosisConfig> pending_config_;
  SourceHealth health_;  // owned by the loop thread between publishes
  std::optional<sources::CollectCost> last_cost_;
  std::uint64_t last_gpu_samples_ = 0;
};

}  // namespace gpulens::agent
