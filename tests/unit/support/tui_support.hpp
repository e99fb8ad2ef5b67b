// SPDX-License-Identifier: Apache-2.0
#pragma once
// What `gpulens top` is handed, built for the tests of its layout, keys and
// clicks: H100s at a given load and three processes on them.
#include <cstdint>
#include <string>

#include "tui/layout.hpp"
#include "tui/top_model.hpp"

namespace gpulens::testing {

inline tui::GpuView make_gpu(int index, double util, double sm) {
  tui::GpuView g;
  g.index = index;
  g.name = "NVIDIA H100 80GB HBM3";
  g.util = util;
  g.sm_active = sm;
  g.tensor = 0;
  g.dram = 0;
  g.occupancy = 0.1;
  g.pcie_rx = 2;
  g.pcie_tx = 3;
  g.mem_used = 980;
  g.mem_total = 81559;
  g.power = 135;
  g.power_limit = 700;
  g.temp = 56;
  g.sm_clock = 1980;
  g.state = "sm_underused";
  g.state_words = "a kernel runs nearly all the time but occupies a small share of the SMs";
  g.confidence_level = "high";
  g.summary = "1 of 132 SMs busy";
  g.fix = "launch more blocks";
  for (int i = 0; i < 50; ++i) {
    g.util_history.push_back(util);
    g.sm_history.push_back(sm);
  }
  return g;
}

inline tui::ProcView make_proc(std::uint32_t pid, int gpu, double mem, const std::string& cmd) {
  tui::ProcView p;
  p.pid = pid;
  p.gpu = gpu;
  p.user = "alice";
  p.mem_mib = mem;
  p.command = cmd;
  return p;
}

inline tui::TopModel make_model(int gpus) {
  tui::TopModel m;
  m.host = "box";
  m.driver = "580.1";
  for (int i = 0; i < gpus; ++i) m.gpus.push_back(make_gpu(i, 100, 0.8));
  m.procs = {make_proc(100, 0, 500, "python train.py"), make_proc(200, 1, 1500, "spin"),
             make_proc(300, 0, 50, "jupyter")};
  return m;
}

inline bool screen_contains(const tui::Screen& s, const std::string& text) {
  return tui::screen_text(s).find(text) != std::string::npos;
}

}  // namespace gpulens::testing
