// SPDX-License-Identifier: Apache-2.0
#include "core/json_number.hpp"
#include "kernels/view/reconcile.hpp"
#include "render/kernels_output.hpp"

namespace gpulens::render {
namespace {

// Every number through core's json_number (ARCHITECTURE.md, "JSON numbers"):
// rounded to a named precision, null when not finite. Kernel times are seconds
// of microsecond kernels (decimals::kFine, as /api/v1/kernels writes them).
nlohmann::ordered_json secs(double s) {
  return json_number(s, decimals::kFine);
}
nlohmann::ordered_json share(double x) {
  return json_number(x, decimals::kRatio);
}
nlohmann::ordered_json micros(double us) {  // a kernel's mean and percentiles: ns
  return json_number(us, decimals::kReading);
}

nlohmann::ordered_json idle_json(const kernels::IdleStats& st) {
  nlohmann::ordered_json gaps = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < kernels::kGapLabels.size(); ++i) {
    gaps.push_back({{"range", kernels::kGapLabels[i]},
                    {"count", st.gaps.count[i]},
                    {"seconds", secs(st.gaps.seconds[i])}});
  }
  return {{"window_s", secs(st.window_s)},
          {"busy_s", secs(st.busy_s)},
          {"idle_share", share(st.idle_share)},
          {"gaps", gaps}};
}

// One span's windows against the counters (kernels/reconcile.hpp).
nlohmann::ordered_json span_check_json(const kernels::SpanCheck& c) {
  nlohmann::ordered_json j;
  if (!c.name.empty()) j["name"] = c.name;
  j["span_s"] = secs(c.to - c.from);
  j["windows_s"] = secs(c.windows_s);
  j["windows_busy_share"] = json_number(c.windows_share, decimals::kRatio);
  j["counters_active_share"] = share(c.counters_share);
  j["counters_active_s"] = secs(c.counters_active_s);
  j["coverage"] = share(c.coverage);
  j["low_coverage"] = c.low_coverage();
  j["shares_differ"] = c.shares_differ();
  return j;
}

}  // namespace

nlohmann::ordered_json kernels_to_json(const kernels::KernelView& v) {
  nlohmann::ordered_json j;
  j["version"] = kKernelsJsonVersion;
  j["available"] = v.available;
  j["status"] = v.status;
  j["notes"] = v.notes;
  if (!v.available) return j;
  j["headline"] = v.headline;
  if (v.sampling.sampled) {
    j["sampling"] = {{"window_s", secs(v.sampling.window_s)},
                     {"every_s", secs(v.sampling.every_s)},
                     {"first_s", secs(v.sampling.first_s)},
                     {"windows", v.sampling.windows},
                     {"traced_s", secs(v.sampling.traced_s)}};
  }
  if (!v.reconciliation.empty()) {
    auto& rec = j["windows_vs_counters"] = nlohmann::ordered_json::array();
    for (const auto& r : v.reconciliation) {
      auto phases = nlohmann::ordered_json::array();
      for (const auto& p : r.phases) phases.push_back(span_check_json(p));
      rec.push_back({{"device", r.device},
                     {"gpu", r.gpu},
                     {"job", span_check_json(r.job)},
                     {"phases", std::move(phases)}});
    }
  }
  j["launches"] = v.launches;
  j["kernel_s"] = secs(v.kernel_s);
  j["kernel_names"] = v.kernel_names;
  auto& top = j["top"] = nlohmann::ordered_json::array();
  for (const auto& k : v.top) {
    nlohmann::ordered_json r = {{"name", k.name},
                                {"short_name", k.short_name},
                                {"count", k.count},
                                {"total_s", secs(k.total_s)},
                                {"share", share(k.share)},
                                {"mean_us", micros(k.mean_us)},
                                {"p50_us", micros(k.p50_us)},
                                {"p99_us", micros(k.p99_us)},
                                {"blocks", k.blocks},
                                {"threads", k.threads},
                                {"registers", k.registers},
                                {"shared_bytes", k.shared_bytes}};
    // A collective (NCCL, ...): its time is communication, not compute.
    r["collective"] = k.collective;
    if (k.coverage_known) {
      r["blocks_per_sm"] = k.blocks_per_sm;
      r["sms_used"] = k.sms_used;
      r["sms"] = k.sms;
      r["waves"] = json_number(k.waves, decimals::kReading);
      r["limited_by"] = k.limited_by;
    }
    top.push_back(std::move(r));
  }
  auto& copies = j["copies"] = nlohmann::ordered_json::array();
  for (const auto& c : v.copies) {
    copies.push_back({{"kind", c.kind},
                      {"src", c.src},
                      {"dst", c.dst},
                      {"count", c.count},
                      {"bytes", c.bytes},
                      {"seconds", secs(c.seconds)},
                      {"gb_per_s", json_number(c.gb_per_s, decimals::kRate)},
                      {"pageable", c.pageable}});
  }
  j["memsets"] = v.memsets;
  j["syncs_recorded"] = v.syncs_recorded;
  j["syncs"] = v.syncs;
  j["sync_s"] = secs(v.sync_s);
  auto& devices = j["devices"] = nlohmann::ordered_json::array();
  for (const auto& d : v.devices) {
    nlohmann::ordered_json dj = {
        {"device", d.device}, {"name", d.name}, {"activity", idle_json(d.activity)}};
    if (d.steps) {
      dj["steps"] = {{"steps", d.steps->steps},
                     {"mean_step_s", secs(d.steps->mean_step_s)},
                     {"idle", idle_json(d.steps->idle)},
                     {"mean_idle_per_step_s", secs(d.steps->mean_idle_per_step_s)},
                     {"syncs_per_step", json_number(d.steps->syncs_per_step, decimals::kReading)},
                     {"sync_s_per_step", secs(d.steps->sync_s_per_step)}};
    }
    devices.push_back(std::move(dj));
  }
  if (!v.collective_ranks.empty()) {
    // Each rank's collective time: waiting for a peer vs moving data
    // (docs/kernels.md, "Collectives across ranks").
    auto& ranks = j["collective_ranks"] = nlohmann::ordered_json::array();
    for (const auto& r : v.collective_ranks) {
      const bool named = r.waited_for && *r.waited_for < v.collective_ranks.size();
      ranks.push_back(
          {{"rank", r.label},
           {"waiting_s", secs(r.waiting_s)},
           {"moving_s", secs(r.moving_s)},
           {"matched", r.matched},
           {"unmatched", r.unmatched},
           {"unmatched_s", secs(r.unmatched_s)},
           {"waited_for", named ? nlohmann::ordered_json(v.collective_ranks[*r.waited_for].label)
                                : nlohmann::ordered_json()},
           {"waited_for_s", secs(r.waited_for_s)}});
    }
  }
  auto& findings = j["findings"] = nlohmann::ordered_json::array();
  for (const auto& f : v.findings)
    findings.push_back({{"kind", f.kind}, {"text", f.text}, {"fix", f.fix}});
  if (v.nvtx) {
    auto& ranges = j["nvtx"]["ranges"] = nlohmann::ordered_json::array();
    for (const auto& r : v.nvtx->ranges) {
      ranges.push_back({{"name", r.name},
                        {"count", r.count},
                        {"total_s", secs(r.total_s)},
                        {"mean_s", secs(r.mean_s)},
                        {"measured", r.measured},
                        {"measured_s", secs(r.measured_s)},
                        {"busy_s", secs(r.busy_s)},
                        {"busy_share", share(r.busy_share)},
                        {"idle_s", secs(r.idle_s)},
                        {"attributed_idle_s", secs(r.attributed_idle_s)}});
    }
    j["nvtx"]["window_idle_s"] = secs(v.nvtx->window_idle_s);
    j["nvtx"]["unranged_idle_s"] = secs(v.nvtx->unranged_idle_s);
    j["nvtx"]["window_clipped"] = v.nvtx->window_clipped;
    j["nvtx"]["instances_dropped"] = v.nvtx->instances_dropped;
    j["nvtx"]["names_folded"] = v.nvtx->names_folded;
    j["nvtx"]["unmatched"] = v.nvtx->unmatched;
    // Ranges are recorded only inside the windows; true when those do not stand
    // for the job (kernels/reconcile.hpp).
    j["nvtx"]["windows_only"] = kernels::any_flagged(v.reconciliation);
  }
  j["dropped_records"] = v.dropped;
  return j;
}

}  // namespace gpulens::render
