// SPDX-License-Identifier: Apache-2.0
// The HTML report: one self-contained page, the verdict first, then what to do,
// then the evidence (funnel, states, time series per GPU, phases, alerts), then
// money and MFU. Everything is inline; nothing is fetched.
#include <fmt/format.h>

#include <algorithm>
#include <ctime>

#include "core/text_units.hpp"
#include "render/format.hpp"
#include "render/html_assets.hpp"
#include "render/html_svg.hpp"
#include "render/verdict_output.hpp"
#include "verdict/state_words.hpp"

namespace gpulens::render {
namespace {

using html::escape;

std::string utc_time(double t) {
  const auto secs = static_cast<std::time_t>(t);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M UTC", &tm);
  return buf;
}

std::string chip(diagnosis::GpuState s) {
  return fmt::format("<span class=\"chip\" style=\"background:{}\" title=\"{}\">{}</span>",
                     html::state_color(s), diagnosis::state_id(s), verdict::state_words(s));
}

std::string tile(std::string_view key, const std::string& value, const std::string& sub,
                 std::string_view cls = "") {
  return fmt::format(
      "<div class=\"tile {}\"><div class=\"k\">{}</div><div class=\"v\">{}</div><div "
      "class=\"s\">{}</div></div>",
      cls, key, escape(value), escape(sub));
}

std::string headline(const verdict::Verdict& v) {
  if (!v.measured && v.headline.empty()) return "Nothing was measured";
  return v.headline.empty() ? std::string() : v.headline.front().text;
}

void hero(std::string& out, const verdict::Verdict& v) {
  const diagnosis::GpuState main =
      v.states.empty() ? diagnosis::GpuState::Unknown : v.states.front().state;
  const bool alarm = !v.headline.empty() && v.headline.front().kind != "steady_state" &&
                     v.headline.front().kind != "idle";
  out += fmt::format("<section class=\"card hero\" style=\"--state:{}\">",
                     alarm ? std::string_view("#dc2626") : html::state_color(main));
  out += "<div class=\"meta\">Verdict</div>";
  out += "<h1>" + escape(headline(v)) + "</h1>";
  if (v.headline.size() > 1) {
    out += "<ul class=\"then\">";
    for (std::size_t i = 1; i < v.headline.size(); ++i) {
      out += fmt::format("<li data-kind=\"{}\">{}</li>", v.headline[i].kind,
                         escape(v.headline[i].text));
    }
    out += "</ul>";
  }
  out += "<p class=\"lead\">";
  if (v.job.present && !v.job.command.empty()) {
    out += "<code>" + escape(v.job.command) + "</code> ";
    if (v.job.signal) {
      out += fmt::format("<span class=\"exit-bad\">was killed by signal {} ({})</span>",
                         *v.job.signal, verdict::signal_name(*v.job.signal));
    } else if (v.job.exit_code) {
      out += fmt::format("<span class=\"{}\">exited with code {}</span>",
                         *v.job.exit_code == 0 ? "exit-ok" : "exit-bad", *v.job.exit_code);
    }
    out += " · ";
  }
  if (!v.measured) {
    out += escape(v.not_measured) + "</p></section>";
    return;
  }
  std::string gpus;
  for (const auto& d : v.devices) {
    gpus += (gpus.empty() ? "" : ", ") +
            fmt::format("GPU {} ({})", d.index, d.name.empty() ? "unnamed" : d.name);
  }
  out += escape(gpus) + "</p><div class=\"tiles\">";
  out +=
      tile("Duration", duration_text(v.duration_s), v.start ? utc_time(*v.start) : std::string());
  out += tile("GPU-hours", format_gpu_hours(v.gpu_hours),
              fmt::format("{} GPU{}", v.devices.size(), v.devices.size() == 1 ? "" : "s"));
  if (v.energy_kwh) out += tile("Energy", fmt::format("{:.3g} kWh", *v.energy_kwh), v.energy_basis);
  if (v.cost.total) {
    out +=
        tile("Cost", format_money(*v.cost.total, v.cost.currency),
             fmt::format("at {}/GPU-h", format_money(*v.cost.price_per_gpu_hour, v.cost.currency)));
  }
  if (v.cost.waste_share) {
    out += tile("Wasted", share_text(v.cost.waste_share, 0),
                v.cost.monthly_waste
                    ? format_money(*v.cost.monthly_waste, v.cost.currency) + "/month if run nonstop"
                    : std::string(),
                *v.cost.waste_share > 0.5 ? "bad" : "");
  }
  if (v.mfu.model) {
    out += tile("MFU", share_text(v.mfu.model, 1), fmt::format("model FLOPs, {}", v.mfu.peak.dtype),
                *v.mfu.model >= 0.35 ? "good" : "");
  } else if (v.mfu.estimate) {
    out += tile("MFU (estimate)", share_text(v.mfu.estimate, 1), "from tensor-pipe activity");
  }
  out += "</div></section>";
}

void fixes(std::string& out, const verdict::Verdict& v) {
  if (v.fixes.empty()) return;
  out += "<section class=\"card\"><h2>What to do first</h2><ol class=\"fixes\">";
  for (const auto& f : v.fixes) out += "<li>" + escape(f) + "</li>";
  out += "</ol>";
  if (!v.evidence_gaps.empty()) {
    // How far to trust the fixes above, and what would settle it.
    out += "<h3>How sure: thin evidence</h3><ul class=\"note\">";
    for (const auto& g : v.evidence_gaps) {
      out +=
          "<li>" + escape(g.what) + " (" + escape(share_text(g.share, 0)) + " of the steady state)";
      if (!g.settle.empty()) out += "; would settle it: " + escape(g.settle);
      out += "</li>";
    }
    out += "</ul>";
  }
  out += "</section>";
}

void funnel(std::string& out, const verdict::Verdict& v) {
  out += "<section class=\"card\"><h2>Utilization funnel</h2>";
  out +=
      "<p class=\"lead\">Each bar is a share of the GPU time paid for; the grey wedges are "
      "what was lost from one step to the next. nvidia-smi shows the kernel-active bar.</p>";
  out += html::funnel_chart(v);
  out += "</section>";
}

void states(std::string& out, const verdict::Verdict& v) {
  if (v.states.empty() && v.edges_share <= 0) return;
  out += "<section class=\"card\"><h2>What the GPUs were doing</h2>";
  out += html::state_bar(v);
  struct Row {
    std::string color, name, meaning;
    diagnosis::GpuState state;
    bool is_state;
    double share;
  };
  std::vector<Row> rows;
  for (const auto& s : v.states) {
    rows.push_back({std::string(html::state_color(s.state)), verdict::state_words(s.state),
                    std::string(diagnosis::state_meaning(s.state)), s.state, true, s.share});
  }
  rows.push_back({std::string(html::kEdgesColor), "start-up",
                  "no GPU work yet (imports, loading, compiling): "
                  "not waste of the job",
                  diagnosis::GpuState::Unknown, false, v.startup_share});
  rows.push_back({std::string(html::kEdgesColor), "tear-down",
                  "no GPU work after the last (saving, "
                  "exiting): not waste of the job",
                  diagnosis::GpuState::Unknown, false, v.teardown_share});
  out += "<div class=\"legend\">";
  for (const auto& r : rows) {
    if (r.share < 0.005) continue;
    out += fmt::format("<span title=\"{}\"><i style=\"background:{}\"></i><b>{}</b> {}</span>",
                       escape(r.meaning), r.color, escape(r.name), share_text(r.share, 0));
  }
  out +=
      "</div><div class=\"scroll\"><table><tr><th>state</th><th "
      "class=\"n\">of all the time</th><th class=\"n\">of the steady state</th>"
      "<th>meaning</th></tr>";
  const double steady = 1.0 - v.edges_share;
  for (const auto& r : rows) {
    if (r.share < 0.005) continue;
    const std::string name =
        r.is_state ? chip(r.state)
                   : fmt::format("<span class=\"chip\" style=\"background:{}\">{}</span>", r.color,
                                 escape(r.name));
    out += fmt::format(
        "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td></tr>", name,
        share_text(r.share, 1), r.is_state && steady > 0 ? share_text(r.share / steady, 1) : "–",
        escape(r.meaning));
  }
  out += "</table></div>";
  if (v.throttled_share >= 0.05) {
    out += fmt::format(
        "<p class=\"note\"><span class=\"chip flag\">throttled</span> {} of the "
        "time: clocks held down by the power limit or heat.</p>",
        share_text(v.throttled_share, 0));
  }
  out += "</section>";
}

void gpus(std::string& out, const verdict::Verdict& v, const Trace& trace, const HtmlOptions& o,
          nlohmann::json& hover) {
  if (!v.start || !v.end) return;
  out += "<section class=\"card\"><h2>Per GPU over time</h2>";
  out +=
      "<div class=\"legend\"><span><i class=\"dash\"></i>GPU util (kernel-active)</span>"
      "<span><i style=\"background:#2563eb\"></i>SM active</span>"
      "<span><i style=\"background:#9333ea\"></i>tensor active</span>"
      "<span><i style=\"background:#f59e0b\"></i>DRAM bandwidth</span>"
      "<span class=\"note\">band below: the diagnosed state</span></div>";
  // Many GPUs share the page's budget of points.
  const std::size_t points = v.devices.size() > 4 ? o.max_points / 2 : o.max_points;
  for (const auto& d : v.devices) {
    const auto s = html::downsample(trace, d.index, *v.start, *v.end, points);
    out += fmt::format("<div class=\"gpu\"><h3>GPU {} · {}</h3>", d.index,
                       escape(d.name.empty() ? "unnamed" : d.name));
    const std::string id = fmt::format("g{}", d.index);
    out += html::activity_chart(s, v, id + "a", hover);
    out += "<div class=\"pair\"><div><h3>Memory</h3>" + html::memory_chart(s, id + "m", hover) +
           "</div><div><h3>Power</h3>" + html::power_chart(s, id + "p", hover) + "</div></div>";
    out += "</div>";
  }
  out += "</section>";
}

std::string mini_bar(std::optional<double> pct) {
  if (!pct) return "–";
  return fmt::format("{:.1f}<span class=\"mini\"><span style=\"width:{:.0f}%\"></span></span>",
                     *pct, std::clamp(*pct, 0.0, 100.0));
}

void phases(std::string& out, const verdict::Verdict& v) {
  if (v.phases.empty()) return;
  out +=
      "<section class=\"card\"><h2>Phases</h2><div class=\"scroll\"><table><tr><th>phase</th><th "
      "class=\"n\">"
      "length</th><th>state</th><th>util %</th><th>SM %</th><th>tensor %</th><th>DRAM %</th>"
      "<th class=\"n\">TFLOP/s</th><th class=\"n\">MFU</th><th class=\"n\">estimate</th></tr>";
  for (const auto& p : v.phases) {
    const std::size_t rows = std::max<std::size_t>(1, p.gpus.size());
    for (std::size_t i = 0; i < rows; ++i) {
      out += "<tr>";
      if (i == 0) {
        out +=
            fmt::format("<td rowspan=\"{}\"><b>{}</b></td><td rowspan=\"{}\" class=\"n\">{}</td>",
                        rows, escape(p.name), rows, duration_text(p.end - p.start));
      }
      if (i < p.gpus.size()) {
        const auto& g = p.gpus[i];
        std::string flags;
        for (const auto& f : g.flags)
          flags += " <span class=\"chip flag\">" + escape(f) + "</span>";
        out += fmt::format("<td title=\"{}\">{}{}{}</td>", escape(g.summary),
                           v.devices.size() > 1 ? fmt::format("GPU {} ", g.gpu) : "", chip(g.state),
                           flags);
        for (Metric m :
             {Metric::GpuUtil, Metric::SmActive, Metric::TensorActive, Metric::DramActive}) {
          out += "<td>" + mini_bar(g.means.get(m)) + "</td>";
        }
      } else {
        out += "<td colspan=\"5\" class=\"empty\">no samples</td>";
      }
      if (i == 0) {
        out += fmt::format(
            "<td rowspan=\"{}\" class=\"n\">{}</td><td rowspan=\"{}\" class=\"n\">{}</td><td "
            "rowspan=\"{}\" class=\"n\">{}</td>",
            rows, p.work ? fmt::format("{:.1f}", p.work->flops_per_s() / 1e12) : "–", rows,
            p.mfu ? share_text(p.mfu, 1) : "–", rows, p.estimate ? share_text(p.estimate, 1) : "–");
      }
      out += "</tr>";
    }
  }
  out += "</table></div></section>";
}

void alerts(std::string& out, const verdict::Verdict& v) {
  out += "<section class=\"card\"><h2>Alerts</h2>";
  if (v.alerts.empty()) out += "<p class=\"empty\">No alert fired.</p>";
  for (const auto& a : v.alerts) {
    const double t0 = v.start.value_or(a.fired_at);
    out += fmt::format(
        "<div class=\"alert\"><span class=\"sev {0}\">{0}</span> <b>{1}</b> on GPU "
        "{2}, from +{3:.1f} s{4}{5}<div>{6}</div>",
        severity_id(a.severity), escape(verdict::rule_words(a.rule)), a.gpu, a.fired_at - t0,
        a.resolved_at ? fmt::format(" to +{:.1f} s", *a.resolved_at - t0)
                      : std::string(", still firing at the end"),
        a.count > 1 ? fmt::format(" ({} times)", a.count) : "", escape(a.message));
    if (!a.fixes.empty()) {
      out += "<ul>";
      for (const auto& f : a.fixes) out += "<li>" + escape(f) + "</li>";
      out += "</ul>";
    }
    out += "</div>";
  }
  out += "</section>";
}

void cost(std::string& out, const verdict::Verdict& v) {
  const verdict::Cost& c = v.cost;
  out += "<section class=\"card\"><h2>Cost</h2>";
  if (!c.total) {
    out +=
        "<p class=\"empty\">No price is known for these GPUs: pass <code>--price</code> "
        "(per GPU-hour).</p></section>";
    return;
  }
  const auto money = [&](std::optional<double> x) {
    return x ? format_money(*x, c.currency) : std::string("–");
  };
  out += fmt::format("<p class=\"lead\">{} GPU-hours at {} per GPU-hour ({}) = <b>{}</b>.</p>",
                     format_gpu_hours(c.gpu_hours), money(c.price_per_gpu_hour),
                     escape(c.price_source), money(c.total));
  out += html::cost_bar(v);
  // Without SM activity the working time is one part, how well it worked unknown.
  const std::string working =
      c.working_unmeasured
          ? fmt::format(
                "<span><i style=\"background:#2a9d9d\"></i>working, how well not "
                "measured <b>{}</b></span>",
                money(c.working_unmeasured))
          : fmt::format(
                "<span><i style=\"background:#22a06b\"></i>SMs at work <b>{}</b></span>"
                "<span><i style=\"background:#e09b2d\"></i>inefficiency: working, SMs idle "
                "<b>{}</b></span>",
                money(c.useful), money(c.inefficiency));
  out += fmt::format(
      "<div class=\"legend\">{}"
      "<span><i style=\"background:#e5533c\"></i>idle in the steady state <b>{}</b></span>"
      "<span><i style=\"background:{}\"></i>start-up and tear-down, not waste <b>{}</b></span>"
      "</div>",
      working, money(c.idle), html::kEdgesColor, money(c.edges));
  if (c.monthly_waste && *c.monthly_waste > 0) {
    out += fmt::format(
        "<div class=\"callout\">Running jobs like this one back to back would waste "
        "about <b>{}</b> a month (of {} a month): that is what the fixes above can "
        "save.</div>",
        money(c.monthly_waste), money(c.monthly_cost));
  }
  out += "</section>";
}

void mfu(std::string& out, const verdict::Verdict& v) {
  const verdict::MfuSummary& m = v.mfu;
  out += "<section class=\"card\"><h2>MFU</h2>";
  if (m.peak.known()) {
    out += fmt::format(
        "<p class=\"lead\">Model FLOP/s over the dense {} peak: {:.1f} TFLOP/s × {} "
        "GPU{} ({}).</p>",
        escape(m.peak.dtype), m.peak.total_tflops / std::max(1, m.peak.gpus), m.peak.gpus,
        m.peak.gpus == 1 ? "" : "s", escape(m.peak.source));
  }
  out += html::mfu_bars(v);
  if (m.work) {
    out += fmt::format(
        "<p class=\"note\">The job reported {:.3g} FLOPs over {} steps in {} ({}): "
        "{:.1f} TFLOP/s.</p>",
        m.work->flops, m.work->steps, duration_text(m.work->seconds), escape(m.work->source),
        m.work->flops_per_s() / 1e12);
  } else {
    out +=
        "<p class=\"note\">The job reported no model FLOPs. Write <code>{\"mark\": \"step\", "
        "\"flops\": F}</code> lines to <code>$GPULENS_MARKS</code> (contrib/gpulens_marks.py "
        "does it in one line), or pass <code>--flops-per-step</code> with "
        "<code>--step-regex</code>.</p>";
  }
  out += "<p class=\"note\">The hardware estimate is tensor-pipe activity";
  if (m.estimate_clock_corrected) out += " scaled by the SM clock over the clock the peak assumes";
  out += ": an estimate, not model FLOPs (it counts any tensor work at full rate).</p></section>";
}

}  // namespace

std::string verdict_to_html(const verdict::Verdict& v, const Trace& trace, const HtmlOptions& o) {
  std::string title = o.title;
  if (title.empty()) title = v.job.command.empty() ? v.host : v.job.command;
  std::string out;
  out.reserve(256 * 1024);
  out += "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">";
  out += "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">";
  out += "<title>gpulens report" + (title.empty() ? "" : ": " + escape(title)) + "</title>";
  out += "<style>" + std::string(html::report_css()) + "</style></head><body><main>";
  out += "<header class=\"top\"><div class=\"brand\">gpulens <span>job report</span></div>";
  out += "<div class=\"meta\">" + escape(v.host.empty() ? "" : v.host + " · ") +
         (v.start ? utc_time(*v.start) : "") + "</div></header>";
  nlohmann::json hover = nlohmann::json::object();
  hero(out, v);
  if (v.measured) {
    fixes(out, v);
    funnel(out, v);
    states(out, v);
    gpus(out, v, trace, o, hover);
    phases(out, v);
    alerts(out, v);
    cost(out, v);
    mfu(out, v);
  }
  if (!v.notes.empty()) {
    out += "<section class=\"card\"><h2>Notes</h2><ul class=\"note\">";
    for (const auto& n : v.notes) out += "<li>" + escape(n) + "</li>";
    out += "</ul></section>";
  }
  out += "<footer>gpulens " GPULENS_VERSION
         " · one self-contained page: no network, no external files</footer></main>";
  // "</" cannot appear inside a script element; "<\/" is the same JSON string.
  std::string data = hover.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  for (std::size_t p = 0; (p = data.find("</", p)) != std::string::npos; p += 3) {
    data.replace(p, 2, "<\\/");
  }
  out += "<script type=\"application/json\" id=\"gl-hover\">" + data + "</script>";
  out += "<script>" + std::string(html::report_js()) + "</script></body></html>\n";
  return out;
}

}  // namespace gpulens::render
