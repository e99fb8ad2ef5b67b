// SPDX-License-Identifier: Apache-2.0
#include "agent/agent.hpp"

#include "agent/log.hpp"
#include "core/clock.hpp"
#include "store/store_writer.hpp"

namespace gpulens::agent {

Agent::Agent(std::unique_ptr<sources::TickSource> source, AgentOptions options,
             store::StoreWriter* writer)
    : source_(std::move(source)),
      options_(std::move(options)),
      writer_(writer),
      engine_(source_->header(), options_.diagnosis),
      builder_(source_->header(), options_.hostname, options_.keep_cmdline) {
  if (!options_.kube_log_dir.empty()) {
    kube_ = std::make_unique<sources::KubePodResolver>(options_.kube_log_dir);
    builder_.use_kube(kube_.get());
  }
  health_.live = source_->live();
  health_.description = options_.source_description;
  snapshot_ = builder_.empty_snapshot(health_);
}

Agent::~Agent() {
  stop();
}

void Agent::start() {
  running_ = true;
  thread_ = std::thread([this] { loop(); });
}

void Agent::stop() {
  source_->stop();
  join();
}

void Agent::join() {
  // The signal thread, the end-of-replay watcher and main may all wait here.
  std::lock_guard lock(join_mutex_);
  if (thread_.joinable()) thread_.join();
}

SnapshotPtr Agent::snapshot() const {
  std::lock_guard lock(mutex_);
  return snapshot_;
}

void Agent::reload(diagnosis::DiagnosisConfig config) {
  std::lock_guard lock(mutex_);
  pending_config_ = std::move(config);
}

void Agent::publish(SnapshotPtr snap) {
  std::lock_guard lock(mutex_);
  snapshot_ = std::move(snap);
}

void Agent::loop() {
  while (true) {
    auto tick = source_->next();
    if (!tick) {
      health_.error = tick.error().message;
      log_error("source failed: {}; the last values stay served", health_.error);
      break;
    }
    if (!tick->has_value()) {
      health_.ended = !source_->live();
      if (health_.ended) log_info("replay finished; the last values stay served (Ctrl-C to stop)");
      break;
    }
    std::optional<diagnosis::DiagnosisConfig> config;
    {
      std::lock_guard lock(mutex_);
      config.swap(pending_config_);
    }
    if (config) {
      engine_ = diagnosis::DiagnosisEngine(source_->header(), std::move(*config));
      log_info("diagnosis settings reloaded");
    }
    const Tick& t = **tick;
    engine_.on_tick(t);
    auto events = engine_.take_events();
    for (const auto& e : events) {
      log_info("alert {} {} on GPU {}: {}", diagnosis::alert_kind_id(e.kind), e.rule, e.gpu,
               e.message);
    }
    if (t.samples.empty() && t.marks.empty()) continue;
    ++health_.ticks;
    health_.last_tick_wall = unix_now();
    if (const auto sampled = source_->stats()) {
      const sources::SamplerStats& stats = *sampled;
      const sources::CollectCost& c = stats.cost;
      const double total = c.total_s();
      if (last_cost_ && stats.gpu_samples > last_gpu_samples_) {
        const sources::CollectCost& p = *last_cost_;
        const double before = p.total_s();
        health_.sample_cpu_s =
            (total - before) / static_cast<double>(stats.gpu_samples - last_gpu_samples_);
      }
      last_cost_ = c;
      last_gpu_samples_ = stats.gpu_samples;
      health_.sampler = stats;
    }
    publish(builder_.build(t, engine_, events, health_));
    if (writer_ != nullptr) {
      std::vector<store::StoredSample> rows;
      rows.reserve(t.samples.size());
      for (const auto& s : t.samples) {
        if (s.values.empty()) continue;
        const diagnosis::GpuStatus& st = engine_.status(s.gpu);
        rows.push_back(store::StoredSample{s.gpu, s.t, s.values,
                                           std::string(diagnosis::state_id(st.state.state)),
                                           st.throttle.throttled});
      }
      store::SlurmJobUses slurm;
      slurm.add_samples(t.samples);
      store::PodUses pods;
      pods.add_samples(t.samples);
      writer_->push(std::move(rows), std::move(events), slurm, pods);
    }
  }
  // The end (or failure) of the source is news for /api/v1/health.
  auto last = std::make_shared<LiveSnapshot>(*snapshot());
  last->source = health_;
  publish(last);
  running_ = false;
}

}  // namespace gpulens::agent
