// SPDX-License-Identifier: Apache-2.0
// dcgm-exporter's default counters (data/dcgm-exporter-default-counters.txt)
// against the --compat dcgm exposition of a GPU that measured everything the
// sampler can: every gap is either closed or written down with its reason.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "exposition/exposition.hpp"
#include "server_support.hpp"

namespace gpulens::exposition {
namespace {

struct Fact {
  std::string type;
  bool emitted = false;
  bool extra = false;
  std::string reason;
};

std::map<std::string, Fact> load_facts() {
  std::ifstream in(std::string(GPULENS_SOURCE_DIR) + "/data/dcgm-exporter-default-counters.txt");
  std::map<std::string, Fact> facts;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    std::string field;
    Fact f;
    words >> field;
    if (field == "extra") {
      f.extra = true;
      words >> field;
    }
    std::string status;
    words >> f.type >> status;
    f.emitted = status == "emitted";
    EXPECT_TRUE(f.emitted || status == "missing") << line;
    std::getline(words, f.reason);
    EXPECT_TRUE(facts.emplace(field, f).second) << "listed twice: " << field;
  }
  return facts;
}

// Every metric the gpu-trace format knows, an XID and the probe's extras.
agent::LiveSnapshot everything_measured() {
  auto snap = gpulens::testing::fixed_snapshot();
  for (auto& g : snap.gpus) {
    for (const auto& info : all_metrics()) {
      if (!g.sample->values.has(info.id)) g.sample->values.set(info.id, 1);
    }
    g.device.extra["x_pci_bus_id"] = "00000000:19:00.0";
    g.device.extra["x_fb_reserved_mib"] = 512.0;
    g.last_xid = 79;
  }
  return snap;
}

// "# TYPE NAME type" lines of an exposition.
std::map<std::string, std::string> declared(const std::string& text) {
  std::map<std::string, std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.starts_with("# TYPE ")) continue;
    std::istringstream words(line.substr(7));
    std::string name, type;
    words >> name >> type;
    out[name] = type;
  }
  return out;
}

TEST(DcgmCoverage, TheFactFileListsTheDefaultCounters) {
  const auto facts = load_facts();
  int defaults = 0;
  for (const auto& [field, f] : facts) {
    if (!f.extra) ++defaults;
    EXPECT_TRUE(f.type == "gauge" || f.type == "counter") << field;
    if (!f.emitted) {
      EXPECT_GT(f.reason.size(), 20u) << field << " is missing without a reason";
    }
  }
  EXPECT_EQ(defaults, 21);  // the public CSV's uncommented lines
}

TEST(DcgmCoverage, NoGapIsSilent) {
  const auto facts = load_facts();
  std::string text;
  render_dcgm_metrics(text, everything_measured());
  const auto types = declared(text);
  for (const auto& [field, f] : facts) {
    const auto it = types.find(field);
    if (f.emitted) {
      ASSERT_NE(it, types.end()) << field << " is listed as emitted but absent";
      EXPECT_EQ(it->second, f.type) << field;
    } else {
      EXPECT_EQ(it, types.end()) << field << " is emitted now: mark it so in the fact file";
    }
  }
  for (const auto& [name, type] : types) {
    EXPECT_TRUE(facts.contains(name)) << name << " is emitted but not in the fact file";
  }
}

TEST(DcgmCoverage, PciBusIdAndXidLabels) {
  std::string text;
  render_dcgm_metrics(text, everything_measured());
  EXPECT_NE(text.find("pci_bus_id=\"00000000:19:00.0\""), std::string::npos) << text;
  EXPECT_NE(text.find("err_code=\"79\",err_msg=\""), std::string::npos) << text;
  EXPECT_NE(text.find("DCGM_FI_DEV_FB_RESERVED{"), std::string::npos);
}

}  // namespace
}  // namespace gpulens::exposition
