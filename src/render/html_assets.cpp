// SPDX-License-Identifier: Apache-2.0
// The style sheet and the one small script of the HTML report, inlined into
// every page so that it opens offline: no fonts, libraries or images to fetch.
#include "render/html_assets.hpp"

namespace gpulens::render::html {

std::string_view report_css() {
  return R"CSS(
:root{--ink:#1f2933;--muted:#667085;--line:#e4e7ec;--card:#fff;--bg:#f5f7fa;--accent:#2563eb}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--ink);font:15px/1.5 -apple-system,BlinkMacSystemFont,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
main{max-width:1180px;margin:0 auto;padding:28px 24px 60px}
header.top{display:flex;justify-content:space-between;align-items:baseline;gap:16px;flex-wrap:wrap;margin-bottom:14px}
.brand{font-weight:700;letter-spacing:.02em;color:var(--accent)}
.brand span{color:var(--muted);font-weight:400}
.meta{color:var(--muted);font-size:13px}
code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:13px}
.card{background:var(--card);border:1px solid var(--line);border-radius:14px;padding:20px 24px;margin:18px 0;box-shadow:0 1px 2px rgba(16,24,40,.04)}
h1{font-size:26px;line-height:1.25;margin:4px 0 6px}
h2{font-size:17px;margin:0 0 12px}
h3{font-size:15px;margin:18px 0 8px}
.lead{color:var(--muted);margin:0 0 16px}
.hero{border-top:5px solid var(--state,#2563eb)}
.then{margin:4px 0 12px;padding-left:20px;color:var(--muted)}
.then li{margin:2px 0}
.tiles{display:grid;grid-template-columns:repeat(auto-fit,minmax(150px,1fr));gap:12px;margin-top:14px}
.tile{background:#f8fafc;border:1px solid var(--line);border-radius:10px;padding:10px 14px}
.tile .k{font-size:12px;color:var(--muted);text-transform:uppercase;letter-spacing:.04em}
.tile .v{font-size:22px;font-weight:650;margin-top:2px}
.tile .s{font-size:12px;color:var(--muted)}
.tile.bad .v{color:#c2410c}
.tile.good .v{color:#15803d}
.chip{display:inline-block;border-radius:999px;padding:1px 10px;font-size:12.5px;font-weight:600;color:#fff;white-space:nowrap}
.chip.flag{background:#fde68a;color:#78350f}
.exit-ok{color:#15803d}.exit-bad{color:#b91c1c}
.chart{width:100%;height:auto;display:block}
.chart text{font-size:12px;fill:var(--ink)}
.chart .axis{font-size:11px;fill:var(--muted)}
.chart .grid{stroke:#eef0f3;stroke-width:1}
.chart .flabel{font-size:14px;font-weight:600}
.chart .fvalue{font-size:15px;font-weight:700}
.chart .fsub{font-size:12px;fill:var(--muted)}
.chart .small{font-size:12.5px}
.chart .line{fill:none;stroke-width:1.6;stroke-linejoin:round}
.chart .line.util{stroke:#8b95a1;stroke-dasharray:5 3}
.chart .line.sm{stroke:#2563eb;stroke-width:2}
.chart .line.tensor{stroke:#9333ea}
.chart .line.dram{stroke:#f59e0b}
.chart .line.mem{stroke:#0e9f9a}
.chart .line.power{stroke:#dc2626}
.chart .area-sm{fill:#2563eb;opacity:.10}
.chart .area-mem{fill:#0e9f9a;opacity:.15}
.chart .area-power{fill:#dc2626;opacity:.08}
.chart .limit{stroke:#475467;stroke-dasharray:4 4;stroke-width:1}
.chart .cursor{stroke:#111827;stroke-width:1;opacity:.5}
.chart .phase0{fill:#eef2f7}.chart .phase1{fill:#e3e8f0}
.chart .phasename{font-size:10.5px;fill:#475467}
.chart .phaseline{stroke:#98a2b3;stroke-dasharray:2 3}
.statebar,.costbar{border-radius:8px;overflow:hidden;height:30px}
.legend{display:flex;flex-wrap:wrap;gap:6px 18px;margin:10px 0 4px;font-size:13px}
.legend i{display:inline-block;width:12px;height:12px;border-radius:3px;margin-right:6px;vertical-align:-1px}
.legend i.dash{height:0;border-top:2px dashed #8b95a1;border-radius:0;vertical-align:3px}
.legend b{font-weight:600}
.gpu{border-top:1px solid var(--line);padding-top:14px;margin-top:14px}
.gpu:first-of-type{border-top:0;margin-top:0;padding-top:0}
.pair{display:grid;grid-template-columns:1fr 1fr;gap:18px}
@media (max-width:800px){.pair{grid-template-columns:1fr}}
.fixes{counter-reset:fix;list-style:none;padding:0;margin:0}
.fixes li{counter-increment:fix;position:relative;padding:10px 14px 10px 50px;margin:8px 0;background:#f8fafc;border:1px solid var(--line);border-radius:10px}
.fixes li::before{content:counter(fix);position:absolute;left:14px;top:9px;width:24px;height:24px;border-radius:50%;background:var(--accent);color:#fff;font-weight:700;font-size:13px;text-align:center;line-height:24px}
table{border-collapse:collapse;width:100%;font-size:13.5px}
th,td{text-align:left;padding:7px 10px;border-bottom:1px solid var(--line);vertical-align:top}
th{font-size:12px;color:var(--muted);text-transform:uppercase;letter-spacing:.03em;font-weight:600}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.scroll{overflow-x:auto}
.mini{display:inline-block;width:60px;height:8px;background:#eef0f3;border-radius:4px;vertical-align:middle;margin-left:6px;overflow:hidden}
.mini span{display:block;height:100%;background:#2563eb}
.sev{font-weight:700;text-transform:uppercase;font-size:11px;padding:1px 7px;border-radius:5px}
.sev.critical{background:#fee2e2;color:#991b1b}.sev.warning{background:#fef3c7;color:#92400e}.sev.info{background:#e0f2fe;color:#075985}
.alert{border:1px solid var(--line);border-radius:10px;padding:10px 14px;margin:8px 0}
.alert ul{margin:6px 0 0;padding-left:20px;color:#344054}
.callout{background:#fff7ed;border:1px solid #fed7aa;border-radius:10px;padding:10px 14px;margin-top:12px}
.note{color:var(--muted);font-size:13px}
.empty{color:var(--muted);font-style:italic}
footer{color:var(--muted);font-size:12px;text-align:center;margin-top:30px}
.tip{position:fixed;pointer-events:none;background:#111827;color:#fff;font-size:12px;line-height:1.45;padding:7px 10px;border-radius:8px;box-shadow:0 4px 14px rgba(0,0,0,.2);display:none;z-index:10;white-space:nowrap}
.tip b{font-weight:600}
.tip i{display:inline-block;width:8px;height:8px;border-radius:2px;margin-right:6px}
)CSS";
}

// Hover read-out for the time-series charts. Written for any browser of the
// last decade (no modules, no optional chaining) and defensive about missing
// data, so that a page never logs an error.
std::string_view report_js() {
  return R"JS(
(function () {
  var holder = document.getElementById('gl-hover');
  if (!holder) return;
  var data;
  try { data = JSON.parse(holder.textContent); } catch (e) { return; }
  var tip = document.createElement('div');
  tip.className = 'tip';
  document.body.appendChild(tip);
  function fmt(v, u) { return v === null || v === undefined ? '–' : v + u; }
  function nearest(px, x) {
    var lo = 0, hi = px.length - 1;
    while (hi - lo > 1) { var mid = (lo + hi) >> 1; if (px[mid] < x) lo = mid; else hi = mid; }
    return Math.abs(px[lo] - x) <= Math.abs(px[hi] - x) ? lo : hi;
  }
  var charts = document.querySelectorAll('svg[data-hover]');
  Array.prototype.forEach.call(charts, function (svg) {
    var d = data[svg.getAttribute('data-hover')];
    var cursor = svg.querySelector('.cursor');
    if (!d || !d.px || d.px.length === 0 || !cursor) return;
    svg.addEventListener('mousemove', function (ev) {
      var r = svg.getBoundingClientRect();
      if (r.width <= 0) return;
      var x = (ev.clientX - r.left) / r.width * d.w;
      var i = nearest(d.px, x);
      cursor.setAttribute('x1', d.px[i]);
      cursor.setAttribute('x2', d.px[i]);
      cursor.setAttribute('visibility', 'visible');
      var html = '<b>+' + d.t[i] + ' s</b>';
      if (d.state && d.state[i]) html += ' · ' + d.state[i];
      for (var c = 0; c < d.cols.length; c++) {
        var col = d.cols[c];
        html += '<br><i style="background:' + col.c + '"></i>' + col.n + ' ' + fmt(col.v[i], col.u);
      }
      tip.innerHTML = html;
      tip.style.display = 'block';
      var left = ev.clientX + 14;
      if (left + tip.offsetWidth > window.innerWidth - 8) left = ev.clientX - tip.offsetWidth - 14;
      tip.style.left = left + 'px';
      tip.style.top = (ev.clientY + 12) + 'px';
    });
    svg.addEventListener('mouseleave', function () {
      cursor.setAttribute('visibility', 'hidden');
      tip.style.display = 'none';
    });
  });
})();
)JS";
}

}  // namespace gpulens::render::html
