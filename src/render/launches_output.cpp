// SPDX-License-Identifier: Apache-2.0
#include "render/launches_output.hpp"

#include <fmt/format.h>

#include "core/text_safety.hpp"
#include "render/format.hpp"
#include "render/html_svg.hpp"

namespace gpulens::render {
namespace {

using html::escape;

long long launch_count_ll(std::uint64_t n) {
  return n > static_cast<std::uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<long long>(n);
}

std::string launch_count_text(std::uint64_t n) {
  return group_thousands(launch_count_ll(n));
}

double launch_share(std::uint64_t part, std::uint64_t whole) {
  return whole == 0 ? 0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole);
}

std::string launch_gpus_text(const std::vector<int>& gpus) {
  if (gpus.empty()) return "no GPU seen";
  std::string out = gpus.size() == 1 ? "GPU " : "GPUs ";
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    if (i > 0) out += ',';
    out += std::to_string(gpus[i]);  // appended apart: GCC 12 -O3 misreads a + b (-Wrestrict)
  }
  return out;
}

std::string launch_name_cut(const std::string& name, std::size_t n) {
  const std::string s = terminal_safe(name);
  return s.size() <= n ? s : s.substr(0, n - 3) + "...";
}

// "1,234,567 kernel launches and 1,200 CUDA-graph launches (3 graphs) from 4 processes".
std::string launch_headline(const kernels::LaunchCounts& c) {
  std::string out = launch_count_text(c.kernel_launches) + " kernel launches";
  if (c.graph_launches > 0) {
    out += fmt::format(" and {} CUDA-graph launches ({} graph{}, whose kernels are not counted)",
                       launch_count_text(c.graph_launches), c.graphs, c.graphs == 1 ? "" : "s");
  }
  return out +
         fmt::format(" from {} process{}", c.processes.size(), c.processes.size() == 1 ? "" : "es");
}

constexpr const char* kLaunchCountsAre =
    "counted at the driver's launch calls: how often, not how long; --kernels traces time";

}  // namespace

std::string launches_to_text(const kernels::LaunchCounts& c) {
  std::string out =
      fmt::format("Kernel launches ({})\n  {}\n", kLaunchCountsAre, launch_headline(c));
  if (!c.gpus.empty()) {
    out += " ";
    for (const auto& g : c.gpus) {
      out += fmt::format(" GPU {}: {:.0f} launches/s;", g.gpu, g.per_second);
    }
    out.back() = '\n';
  }
  if (!c.top.empty()) {
    out += "  most launched:\n";
    for (const auto& k : c.top) {
      out += fmt::format("  {:>6.1f}% {:>13}  {}\n", launch_share(k.launches, c.kernel_launches),
                         launch_count_text(k.launches), launch_name_cut(k.name, 90));
    }
  }
  if (c.processes.size() > 1) {
    out += "  processes:\n";
    for (std::size_t i = 0; i < c.processes.size() && i < 8; ++i) {
      const auto& p = c.processes[i];
      out += fmt::format("    pid {} {}  {}  {} launches in {:.0f} s{}\n", p.pid,
                         launch_name_cut(p.comm, 16), launch_gpus_text(p.gpus),
                         launch_count_text(p.kernel_launches + p.graph_launches), p.seconds,
                         p.final ? "" : " (to its last write)");
    }
    if (c.processes.size() > 8) {
      out += fmt::format("    and {} more\n", c.processes.size() - 8);
    }
  }
  for (const auto& n : c.notes) out += "  note: " + terminal_safe(n) + "\n";
  return out;
}

nlohmann::ordered_json launches_to_json(const kernels::LaunchCounts& c) {
  nlohmann::ordered_json j;
  j["kernel_launches"] = c.kernel_launches;
  j["graph_launches"] = c.graph_launches;
  j["graphs"] = c.graphs;
  j["unlisted_launches"] = c.unlisted_launches;
  j["span_s"] = c.span_s;
  j["top"] = nlohmann::ordered_json::array();
  for (const auto& k : c.top) {
    j["top"].push_back({{"name", k.name},
                        {"launches", k.launches},
                        {"share_pct", launch_share(k.launches, c.kernel_launches)}});
  }
  j["gpus"] = nlohmann::ordered_json::array();
  for (const auto& g : c.gpus) {
    j["gpus"].push_back({{"gpu", g.gpu}, {"launches", g.launches}, {"per_second", g.per_second}});
  }
  j["processes"] = nlohmann::ordered_json::array();
  for (const auto& p : c.processes) {
    j["processes"].push_back({{"pid", p.pid},
                              {"comm", p.comm},
                              {"gpus", p.gpus},
                              {"kernel_launches", p.kernel_launches},
                              {"graph_launches", p.graph_launches},
                              {"seconds", p.seconds},
                              {"final", p.final}});
  }
  j["notes"] = c.notes;
  return j;
}

std::string launches_to_html(const kernels::LaunchCounts& c) {
  std::string out = "<section class=\"card\" id=\"launches\"><h2>Kernel launches</h2>";
  out += "<p>" + escape(launch_headline(c)) + "; " + escape(kLaunchCountsAre) + ".</p>";
  if (!c.gpus.empty()) {
    out += "<p>";
    for (const auto& g : c.gpus) {
      out += fmt::format("GPU {}: {:.0f} launches/s. ", g.gpu, g.per_second);
    }
    out += "</p>";
  }
  if (!c.top.empty()) {
    out += "<table><tr><th>share</th><th>launches</th><th>kernel</th></tr>";
    for (const auto& k : c.top) {
      out += fmt::format("<tr><td>{:.1f}%</td><td>{}</td><td>{}</td></tr>",
                         launch_share(k.launches, c.kernel_launches), launch_count_text(k.launches),
                         escape(k.name));
    }
    out += "</table>";
  }
  if (!c.notes.empty()) {
    out += "<ul class=\"note\">";
    for (const auto& n : c.notes) out += "<li>" + escape(n) + "</li>";
    out += "</ul>";
  }
  return out + "</section>";
}

std::string insert_launches_html(std::string page, const kernels::LaunchCounts& c) {
  return html::insert_before_script(std::move(page), launches_to_html(c));
}

}  // namespace gpulens::render
