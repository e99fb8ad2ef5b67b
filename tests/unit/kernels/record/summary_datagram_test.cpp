// SPDX-License-Identifier: Apache-2.0
#include "kernels/record/summary_datagram.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace gpulens::kernels {
namespace {

constexpr std::int64_t kBase = 1'700'000'000'000'000'000;

// Device 0: 12 kernels, kernel i running (i + 1) ms, one an NCCL all-reduce;
// device 1: one kernel. A 2-second window; device 0 busy 0.5 s of it.
struct Sample {
  NamesRecord names;
  ChunkRecord chunk;
};

Sample sample() {
  Sample s;
  for (std::uint32_t i = 0; i < 12; ++i) {
    const std::string name =
        i == 11 ? std::string("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage)")
                : fmt::format("void gemm_{}<float>(float*)", i);
    s.names.kernel_names.emplace_back(i, name);
    s.names.configs.push_back(ConfigEntry{i, i, 0, {1, 1, 1}, {32, 1, 1}, 32, 0, 0});
    s.chunk.kernels.push_back(KernelEntry{i, 2, (i + 1) * 1'000'000, 1, 1, {}});
  }
  s.names.kernel_names.emplace_back(100, "other_device_kernel");
  s.names.configs.push_back(ConfigEntry{100, 100, 1, {1, 1, 1}, {32, 1, 1}, 32, 0, 0});
  s.chunk.kernels.push_back(KernelEntry{100, 5, 7'000'000, 1, 1, {}});
  s.chunk.seq = 3;
  s.chunk.start_ns = 10'000'000'000;
  s.chunk.end_ns = 12'000'000'000;
  s.chunk.window = true;
  s.chunk.copies.push_back(CopyEntry{0, "HtoD", "pageable", "device", 4, 4096, 3000});
  s.chunk.copies.push_back(CopyEntry{0, "DtoH", "device", "pinned", 1, 1024, 1000});
  s.chunk.memsets.push_back(MemsetEntry{1, 2, 64, 500});
  // 0.3 s + 0.2 s busy on device 0, one sketch span of 0.2 s holding a 50 ms closed gap.
  s.chunk.busy.push_back(BusySketch{0,
                                    {{10'000'000'000, 10'300'000'000, 1, 0, 0},
                                     {11'000'000'000, 11'250'000'000, 2, 1, 50'000'000}}});
  s.chunk.dropped = 9;
  return s;
}

TEST(KernelSummary, TopKernelsOtherIdleCollectivesAndCopiesPerDevice) {
  const Sample in = sample();
  SummaryBuilder b;
  b.add_names(in.names);
  const WindowSummary s = b.summarise(in.chunk, kBase);
  EXPECT_EQ(s.seq, 3u);
  EXPECT_EQ(s.start_unix_ns, kBase + 10'000'000'000);
  EXPECT_EQ(s.end_unix_ns, kBase + 12'000'000'000);
  EXPECT_EQ(s.cupti_dropped, 9u);
  ASSERT_EQ(s.devices.size(), 2u);
  const DeviceWork& d = s.devices[0];
  EXPECT_EQ(d.device, 0u);
  ASSERT_EQ(d.top.size(), kSummaryTopKernels);
  EXPECT_EQ(d.top[0].name, "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage)");
  EXPECT_EQ(d.top[0].ns, 12'000'000u);
  EXPECT_EQ(d.top[0].launches, 2u);
  EXPECT_EQ(d.top[9].name, "void gemm_2<float>(float*)");
  // The two shortest (1 and 2 ms) are the remainder.
  EXPECT_EQ(d.other_kernels, 2u);
  EXPECT_EQ(d.other_launches, 4u);
  EXPECT_EQ(d.other_ns, 3'000'000u);
  EXPECT_EQ(d.collectives, (WorkTotal{2, 0, 12'000'000}));
  EXPECT_EQ(d.copies, (WorkTotal{5, 5120, 4000}));
  EXPECT_EQ(d.busy_ns, 500'000'000u);
  EXPECT_EQ(d.idle_ns, 1'500'000'000u);
  const DeviceWork& e = s.devices[1];
  EXPECT_EQ(e.device, 1u);
  ASSERT_EQ(e.top.size(), 1u);
  EXPECT_EQ(e.top[0].name, "other_device_kernel");
  EXPECT_EQ(e.memsets, (WorkTotal{2, 64, 500}));
  EXPECT_EQ(e.idle_ns, 2'000'000'000u);  // no busy sketch: idle all window
}

TEST(KernelSummary, RoundTripsThroughTheDatagram) {
  const Sample in = sample();
  SummaryBuilder b;
  b.add_names(in.names);
  WindowSummary s = b.summarise(in.chunk, kBase);
  s.summaries_dropped = 4;
  const std::string bytes = encode_summary(s);
  std::string why;
  const auto back = decode_summary(bytes, why);
  ASSERT_TRUE(back) << why;
  EXPECT_EQ(back->summaries_dropped, 4u);
  ASSERT_EQ(back->devices.size(), 2u);
  EXPECT_EQ(back->devices[0].top.size(), kSummaryTopKernels);
  EXPECT_EQ(back->devices[0].top[3].name, s.devices[0].top[3].name);
  EXPECT_EQ(back->devices[0].other_ns, s.devices[0].other_ns);
  EXPECT_EQ(back->devices[0].copies, s.devices[0].copies);
  EXPECT_EQ(back->devices[1].memsets, s.devices[1].memsets);
}

TEST(KernelSummary, TheLargestSummaryFitsOneDatagramAndKeepsItsTotals) {
  // As many devices and kernels as a reader takes, every name at its longest.
  WindowSummary s;
  s.start_unix_ns = kBase;
  s.end_unix_ns = kBase + 2'000'000'000;
  std::uint64_t total = 0;
  for (std::uint32_t d = 0; d < kMaxSummaryDevices + 3; ++d) {
    DeviceWork dev;
    dev.device = d;
    for (std::uint32_t k = 0; k < 40; ++k) {
      dev.top.push_back(KernelTime{std::string(300, static_cast<char>('a' + k % 26)), 1, 1000 + k});
      if (d < kMaxSummaryDevices) total += 1000 + k;
    }
    s.devices.push_back(std::move(dev));
  }
  const std::string bytes = encode_summary(s);
  EXPECT_LE(bytes.size(), kMaxSummaryBytes);
  std::string why;
  const auto back = decode_summary(bytes, why);
  ASSERT_TRUE(back) << why;
  ASSERT_EQ(back->devices.size(), kMaxSummaryDevices);
  std::uint64_t kept = 0;
  for (const auto& d : back->devices) {
    kept += d.other_ns;
    for (const auto& k : d.top) {
      kept += k.ns;
      EXPECT_LE(k.name.size(), kMaxSummaryNameBytes);
    }
  }
  EXPECT_EQ(kept, total);  // names dropped into `other`, no time lost
}

TEST(KernelSummary, CutNamesStayUtf8) {
  const std::string name = std::string(255, 'x') + "\xC3\xA9";  // é across byte 256
  EXPECT_EQ(cut_name(name, 256), std::string(255, 'x'));
  EXPECT_EQ(cut_name("short", 256), "short");
}

std::string valid() {
  WindowSummary s;
  s.start_unix_ns = kBase;
  s.end_unix_ns = kBase + 1000;
  DeviceWork d;
  d.busy_ns = 400;
  d.idle_ns = 600;
  d.top.push_back(KernelTime{"k", 1, 400});
  s.devices.push_back(d);
  return encode_summary(s);
}

// The datagram with one field replaced.
std::string with(const std::string& pointer, const nlohmann::json& value) {
  auto j = nlohmann::json::parse(valid());
  j[nlohmann::json::json_pointer(pointer)] = value;
  return j.dump();
}

TEST(KernelSummary, RefusesWhatIsNotASummary) {
  std::string why;
  ASSERT_TRUE(decode_summary(valid(), why)) << why;
  const std::pair<std::string, std::string> bad[] = {
      {"", "empty"},
      {"\x1b[2J garbage", "not JSON"},
      {"[1,2,3]", "an array"},
      {std::string(20000, '['), "deep nesting"},
      {std::string(kMaxSummaryBytes + 1, ' '), "oversized"},
      {with("/x_kernel_summary", 2), "another version"},
      {with("/seq", -1), "negative seq"},
      {with("/start_unix_ns", "soon"), "a text time"},
      {with("/end_unix_ns", kBase - 1), "end before start"},
      {with("/devices/0/busy_ns", 5000), "busy longer than the window"},
      {with("/devices/0/top/0/name", std::string(kMaxSummaryNameBytes + 1, 'n')), "long name"},
      {with("/devices/0/top/0/name", ""), "empty name"},
      {with("/devices/0/top/0/ns", 1.5), "fractional ns"},
      {with("/devices/0/other", 3), "other not an object"},
      {with("/devices/0/device", 99999), "not an ordinal"},
      {with("/devices", nlohmann::json::array({1})), "a device not an object"},
      {with("/window", "yes"), "window not a boolean"},
  };
  for (const auto& [bytes, what] : bad) {
    EXPECT_FALSE(decode_summary(bytes, why)) << what;
    EXPECT_FALSE(why.empty()) << what;
  }
  // Too many devices, and too many kernels on one.
  auto j = nlohmann::json::parse(valid());
  for (std::size_t i = 0; i < kMaxSummaryDevices; ++i) j["devices"].push_back(j["devices"][0]);
  EXPECT_FALSE(decode_summary(j.dump(), why));
  j = nlohmann::json::parse(valid());
  for (std::size_t i = 0; i < kMaxSummaryTop; ++i) {
    j["devices"][0]["top"].push_back(j["devices"][0]["top"][0]);
  }
  EXPECT_FALSE(decode_summary(j.dump(), why));
}

// Issue 47, 4: one 2-s window claimed 1.8e10 kernel seconds. A window's times
// and counts are checked against what a device could do in it: at most
// kMaxConcurrentWork kernels at once, one start a nanosecond.
TEST(KernelSummary, TimesAndCountsPastTheWindowAreRefused) {
  std::string why;
  const std::uint64_t most = 1000 * kMaxConcurrentWork;  // valid()'s window is 1000 ns
  ASSERT_TRUE(decode_summary(with("/devices/0/top/0/ns", most), why)) << why;
  const std::pair<std::string, std::string> bad[] = {
      {with("/devices/0/top/0/ns", most + 1), "a kernel's time"},
      {with("/devices/0/top/0/ns", 18'000'000'000'000'000'000ULL), "1.8e10 s"},
      {with("/devices/0/top/0/launches", 1001), "launches"},
      {with("/devices/0/other/ns", most + 1), "other's time"},
      {with("/devices/0/other/launches", 1001), "other's launches"},
      {with("/devices/0/collectives/ns", most + 1), "collectives' time"},
      {with("/devices/0/copies/count", 1001), "copies"},
      {with("/devices/0/memsets/ns", most + 1), "memsets' time"},
      {with("/devices/0/idle_ns", 700), "busy and idle past the window"},
  };
  for (const auto& [bytes, what] : bad) {
    EXPECT_FALSE(decode_summary(bytes, why)) << what;
  }
  // Two kernels each within the bound whose sum is not.
  auto j = nlohmann::json::parse(with("/devices/0/top/0/ns", most));
  j["devices"][0]["top"].push_back(j["devices"][0]["top"][0]);
  j["devices"][0]["top"][1]["name"] = "k2";
  EXPECT_FALSE(decode_summary(j.dump(), why));
}

TEST(KernelSummary, SumsSaturateInsteadOfWrapping) {
  EXPECT_EQ(saturating_add(UINT64_MAX - 1, 1), UINT64_MAX);
  EXPECT_EQ(saturating_add(UINT64_MAX - 1, 5), UINT64_MAX);
  EXPECT_EQ(saturating_add(2, 3), 5u);
}

}  // namespace
}  // namespace gpulens::kernels
