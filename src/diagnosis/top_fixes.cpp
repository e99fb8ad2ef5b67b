#include "diagnosis/top_fixes.hpp"

#include <algorithm>
#include <map>
#include <optional>

namespace gpulens {
namespace {

// How much a second in a state asks for a change. compute_bound is the healthy
// case: its fixes (lower precision, fusing) are the next step, not a repair.
double state_weight(GpuState s) {
  switch (s) {
    case GpuState::Unknown:
      return 0.0;
    case GpuState::ComputeBound:
      return 0.25;
    case GpuState::Idle:
      return 0.5;  // often the job's own start-up and tear-down
    default:
      return 1.0;
  }
}

double severity_weight(Severity s) {
  switch (s) {
    case Severity::Critical:
      return 2.0;
    case Severity::Warning:
      return 1.0;
    case Severity::Info:
      return 0.5;
  }
  return 1.0;
}

struct Finding {
  double score = 0;
  double longest = -1;
  std::vector<std::string> fixes;  // from the longest occurrence
  std::size_t first_seen = 0;
};

void add(std::map<std::string, Finding>& findings, const std::string& key, double seconds,
         double weight, const std::vector<std::string>& fixes) {
  if (weight <= 0 || fixes.empty()) return;
  auto [it, inserted] = findings.try_emplace(key);
  if (inserted) it->second.first_seen = findings.size();
  it->second.score += seconds * weight;
  if (seconds > it->second.longest) {
    it->second.longest = seconds;
    it->second.fixes = fixes;
  }
}

}  // namespace

std::vector<std::string> top_fixes(const DiagnosisReport& report, double end, std::size_t count) {
  std::map<std::string, Finding> findings;
  for (const auto& run : report.timeline) {
    add(findings, std::string(state_id(run.state)), run.end - run.start, state_weight(run.state),
        run.fixes);
  }
  for (const auto& a : report.alerts) {
    const double until = a.resolved_at.value_or(std::max(end, a.fired_at));
    add(findings, "alert:" + a.rule, std::max(until - a.since, 1.0), severity_weight(a.severity),
        a.fixes);
  }
  std::vector<const Finding*> order;
  for (const auto& [_, f] : findings) order.push_back(&f);
  std::stable_sort(order.begin(), order.end(), [](const Finding* a, const Finding* b) {
    return a->score != b->score ? a->score > b->score : a->first_seen < b->first_seen;
  });
  // Seats by the D'Hondt rule: the next fix comes from the finding with the most
  // weight per fix already taken, so a dominant bottleneck gets several fixes and
  // a minor one still gets its first.
  std::vector<std::string> out;
  std::vector<std::size_t> taken(order.size(), 0);
  while (out.size() < count) {
    std::optional<std::size_t> best;
    for (std::size_t i = 0; i < order.size(); ++i) {
      if (taken[i] >= order[i]->fixes.size()) continue;
      const double q = order[i]->score / static_cast<double>(taken[i] + 1);
      if (!best || q > order[*best]->score / static_cast<double>(taken[*best] + 1)) best = i;
    }
    if (!best) break;
    const auto& fix = order[*best]->fixes[taken[*best]++];
    if (std::find(out.begin(), out.end(), fix) == out.end()) out.push_back(fix);
  }
  return out;
}

}  // namespace gpulens
