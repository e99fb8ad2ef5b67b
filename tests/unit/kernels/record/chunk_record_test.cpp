// SPDX-License-Identifier: Apache-2.0
// The version-4 kernel record (kernels/record/chunk_record.hpp): what the writer encodes
// reads back the same; no line of any record type passes kMaxRecordBytes, however
// large its fields; the sketches stay bounded and keep the long gaps; a recording
// with a line the reader cannot read says which and why, and keeps the rest.
// (The reader's own errors: chunk_record_read_test.cpp; what the gatherer keeps of
// many windows: kernels/view/record_gatherer_test.cpp.)
#include "kernels/record/chunk_record.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/input_limits.hpp"
#include "core/trace_reader.hpp"
#include "kernel_lines.hpp"
#include "kernels/record/chunk_record_read.hpp"
#include "kernels/view/analysis.hpp"

namespace gpulens::kernels {
namespace {

using nlohmann::json;

// Every line within the bound, and read back whole.
std::vector<ChunkLine> read_all(const std::vector<std::string>& lines) {
  std::vector<ChunkLine> out;
  for (const auto& l : lines) {
    EXPECT_LE(l.size(), kMaxRecordBytes);
    EXPECT_LE(l.size(), kMaxLineBytes);
    auto r = read_chunk_line(json::parse(l));
    EXPECT_TRUE(r) << (r ? "" : r.error().message);
    if (r) out.push_back(std::move(*r));
  }
  return out;
}

// The worst a field can be: the longest text the writer keeps, every character
// one that JSON escapes as \u00XX (six bytes).
std::string worst_text() {
  return std::string(5000, '\x01');
}

TEST(ChunkRecord, AChunkReadsBackAsWritten) {
  ChunkRecord c;
  c.seq = 7, c.start_ns = 1000, c.end_ns = 2'000'000'000, c.window = true;
  c.kernels.push_back({3, 10, 5000, 100, 900, {{50, 4}, {60, 6}}});
  c.copies.push_back({0, "HtoD", "pageable", "device", 2, 4096, 800});
  c.memsets.push_back({1, 3, 300, 30});
  c.streams.push_back({0, 7, 10, 5000});
  c.busy.push_back({0, {{1000, 2000, 1, 0, 0}, {5000, 9000, 5, 4, 1500}}});
  c.syncs = {{3000, 3500, 1, 0, 0}, {7000, 7800, 3, 2, 100}};
  c.ranges.push_back({2, 4, 400, 50, 200});
  c.instances.push_back({100, 300, 2});
  c.collectives.push_back({2, 3, {{500, 900}, {100, 400}, {100, 150}}});
  c.dropped = 5, c.instances_dropped = 6, c.names_folded = 7, c.configs_folded = 8;
  const auto lines = read_all(encode_chunk(99, c));
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].pid, 99);
  const auto& r = std::get<ChunkRecord>(lines[0].record);
  EXPECT_EQ(r.seq, 7u);
  EXPECT_EQ(r.start_ns, 1000);
  EXPECT_EQ(r.end_ns, 2'000'000'000);
  EXPECT_TRUE(r.window);
  ASSERT_EQ(r.kernels.size(), 1u);
  EXPECT_EQ(r.kernels[0].hist, c.kernels[0].hist);
  EXPECT_EQ(r.copies[0].src, "pageable");
  EXPECT_EQ(r.memsets[0].bytes, 300u);
  EXPECT_EQ(r.streams[0].busy_ns, 5000u);
  ASSERT_EQ(r.busy.size(), 1u);
  ASSERT_EQ(r.busy[0].spans.size(), 2u);
  EXPECT_EQ(r.busy[0].spans[1].start, 5000);
  EXPECT_EQ(r.busy[0].spans[1].end, 9000);
  EXPECT_EQ(r.busy[0].spans[1].closed, 4u);
  EXPECT_EQ(r.busy[0].spans[1].gap_ns, 1500u);
  ASSERT_EQ(r.syncs.size(), 2u);
  EXPECT_EQ(r.syncs[1].parts, 3u);
  EXPECT_EQ(r.ranges[0].max_ns, 200u);
  EXPECT_EQ(r.instances[0].end, 300);
  ASSERT_EQ(r.collectives.size(), 1u);  // sorted by start
  EXPECT_EQ(r.collectives[0].device, 2u);
  EXPECT_EQ(r.collectives[0].dropped, 3u);
  const std::vector<std::pair<std::int64_t, std::int64_t>> sorted = {
      {100, 150}, {100, 400}, {500, 900}};
  EXPECT_EQ(r.collectives[0].instances, sorted);
  EXPECT_EQ(r.dropped, 5u);
  EXPECT_EQ(r.configs_folded, 8u);
}

TEST(ChunkRecord, NoLineOfAnyRecordPassesTheBoundHoweverLargeItsFields) {
  ProcessRecord p;
  p.exe = p.cupti_path = p.schedule_error = p.kinds = worst_text();
  p.cupti_searched.assign(100, worst_text());
  p.sampling = ProcessRecord::Sampling{1, 2, 3};
  p.base_unix_ns = INT64_MAX;
  p.base_ns = UINT64_MAX;
  EXPECT_EQ(read_all(encode_process(INT64_MIN, p)).size(), 1u);

  NamesRecord n;
  for (std::uint32_t i = 0; i < 200; ++i) {
    n.kernel_names.emplace_back(UINT32_MAX - i, worst_text());
    ConfigEntry cfg;
    cfg.id = cfg.name = cfg.device = UINT32_MAX;
    for (auto& d : cfg.grid) d = UINT32_MAX;
    for (auto& d : cfg.block) d = UINT32_MAX;
    n.configs.push_back(cfg);
    n.range_names.push_back({UINT32_MAX, worst_text(), worst_text()});
    n.devices.push_back({UINT32_MAX, worst_text()});
  }
  const auto names = encode_names(1, UINT64_MAX, n);
  EXPECT_GT(names.size(), 5u);  // cut into parts
  std::size_t read_back = 0;
  for (const auto& l : read_all(names)) {
    read_back += std::get<NamesRecord>(l.record).kernel_names.size();
  }
  EXPECT_EQ(read_back, 200u);

  ChunkRecord c;
  c.seq = UINT64_MAX;
  KernelEntry k{UINT32_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX, {}};
  for (int b = 0; b <= 1024; ++b)
    k.hist.emplace_back(b, UINT64_MAX);  // every bucket the reader takes
  c.kernels.assign(30, k);
  c.copies.assign(30, CopyEntry{UINT32_MAX, worst_text(), worst_text(), worst_text(), 1, 1, 1});
  std::vector<SketchSpan> spans;
  for (std::size_t i = 0; i < kMaxSketchSpans; ++i) {
    const auto at = static_cast<std::int64_t>(i) * (INT64_MAX / 300);
    spans.push_back({at, at + INT64_MAX / 600, UINT64_MAX, UINT64_MAX,
                     static_cast<std::uint64_t>(INT64_MAX / 600)});
  }
  c.busy.assign(16, BusySketch{UINT32_MAX, spans});
  c.syncs = spans;
  c.instances.assign(kMaxChunkInstances, InstanceEntry{INT64_MIN, INT64_MAX, UINT32_MAX});
  // Collectives: the cap's worth per device, every length of 19 digits, and more
  // past the cap (counted, not written).
  CollectiveInstances col{UINT32_MAX, UINT32_MAX, {}};
  for (std::size_t i = 0; i < kMaxChunkCollectives + 10; ++i) {
    col.instances.emplace_back(static_cast<std::int64_t>(i) * (INT64_MAX / 4096), INT64_MAX);
  }
  col.instances.front().first = INT64_MIN + 1;  // a step from it passes the range: dropped
  c.collectives.assign(16, col);
  ChunkRecord one;
  one.collectives = {col};
  const auto one_line = encode_chunk(1, one);
  ASSERT_EQ(one_line.size(), 1u);
  EXPECT_LE(one_line[0].size(), kMaxEntryBytes);  // one entry and the line's head
  const auto chunk = encode_chunk(1, c);
  EXPECT_GT(chunk.size(), 2u);
  std::size_t kernels = 0, busy = 0, collectives = 0;
  for (const auto& l : read_all(chunk)) {
    kernels += std::get<ChunkRecord>(l.record).kernels.size();
    busy += std::get<ChunkRecord>(l.record).busy.size();
    for (const auto& cl : std::get<ChunkRecord>(l.record).collectives) {
      ++collectives;
      EXPECT_EQ(cl.instances.size(), kMaxChunkCollectives - 1);
      EXPECT_EQ(cl.dropped, std::uint64_t{UINT32_MAX} + 11);
    }
  }
  EXPECT_EQ(kernels, 30u);
  EXPECT_EQ(busy, 16u);
  EXPECT_EQ(collectives, 16u);

  EndRecord e;
  e.status = e.reason = e.nvtx_status = e.nvtx_reason = e.detach_note = worst_text();
  e.yielded_ns = INT64_MIN;
  e.activity = std::make_pair(INT64_MIN, INT64_MAX);
  e.unmatched = e.chunks = e.detaches = e.detach_max_ns = UINT64_MAX;
  EXPECT_EQ(read_all(encode_end(1, e)).size(), 1u);
}

TEST(ChunkRecord, AnEndSaysHowOftenCuptiDetachedOrWhyNot) {
  EndRecord e;
  e.chunks = 3;
  e.detaches = 12;
  e.detach_max_ns = 4'500'000;
  const auto back = std::get<EndRecord>(read_all(encode_end(7, e)).at(0).record);
  EXPECT_EQ(back.detaches, 12u);
  EXPECT_EQ(back.detach_max_ns, 4'500'000u);
  EXPECT_TRUE(back.detach_note.empty());

  EndRecord kept;
  kept.detach_note = "cuptiSubscribe: taken; CUPTI stayed attached between windows";
  const auto line = encode_end(7, kept).at(0);
  EXPECT_EQ(line.find("\"detaches\""), std::string::npos);  // none: not written
  EXPECT_EQ(std::get<EndRecord>(read_all({line}).at(0).record).detach_note, kept.detach_note);
}

TEST(ChunkRecord, AnEndCountsTheSummariesSentToTheAgentAndThoseDropped) {
  EndRecord e;
  e.agent = true;
  e.agent_sent = 40;
  e.agent_dropped = 3;
  const auto back = std::get<EndRecord>(read_all(encode_end(7, e)).at(0).record);
  EXPECT_TRUE(back.agent);
  EXPECT_EQ(back.agent_sent, 40u);
  EXPECT_EQ(back.agent_dropped, 3u);
  EndRecord bad;
  bad.agent = true;
  bad.agent_note = "GPULENS_KERNELS_AGENT 'x' is not 1, agent or an absolute socket path";
  EXPECT_EQ(std::get<EndRecord>(read_all(encode_end(7, bad)).at(0).record).agent_note,
            bad.agent_note);
  // Not asked for: not written.
  EXPECT_EQ(encode_end(7, EndRecord{}).at(0).find("\"agent\""), std::string::npos);
}

TEST(ChunkRecord, ASketchKeepsTheLongestGapsAndCountsWhatItClosed) {
  // 10,000 kernels of 5 us with 1 us gaps, and every 1,000th gap is 1 ms.
  std::vector<std::pair<std::int64_t, std::int64_t>> busy;
  std::int64_t t = 0;
  for (int i = 0; i < 10000; ++i) {
    busy.emplace_back(t, t + 5000);
    t += 5000 + (i % 1000 == 999 ? 1'000'000 : 1000);
  }
  const auto s = sketch_spans(busy, 16);
  ASSERT_EQ(s.size(), 16u);
  std::uint64_t parts = 0, closed = 0, gap = 0;
  for (const auto& x : s) parts += x.parts, closed += x.closed, gap += x.gap_ns;
  EXPECT_EQ(parts, 10000u);
  EXPECT_EQ(closed, 10000u - 16u);
  EXPECT_EQ(gap, (10000u - 16u) * 1000u);  // only 1 us gaps closed
  int long_gaps = 0;
  for (std::size_t i = 1; i < s.size(); ++i) long_gaps += s[i].start - s[i - 1].end == 1'000'000;
  EXPECT_EQ(long_gaps, 9);  // every long gap stays
  // Under the bound, every interval stays, exact.
  EXPECT_EQ(sketch_spans({{0, 10}, {20, 30}}, 16).size(), 2u);
  EXPECT_EQ(sketch_spans({{0, 10}, {5, 30}}, 16)[0].parts, 2u);  // overlapping: one span
  // At the bound, the smallest gaps close first.
  const auto two = sketch_spans({{0, 10}, {11, 20}, {120, 130}}, 2);
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[0].end, 20);
  EXPECT_EQ(two[0].gap_ns, 1u);
}

TEST(ChunkRecord, AnOldWholeJobLinePastTheLimitIsSaidNotFatal) {
  // A version-3 record keeps its keys sorted, "x_kernels" last: a 14 MB one (a
  // 44-second job traced whole) starts with its activity.
  std::string text = "{\"format\":\"gpu-trace\",\"version\":1,\"host\":\"h\",\"devices\":[]}\n";
  text += "{\"activity\":{\"first_ns\":1,\"last_ns\":2},\"busy\":[{\"device\":0,\"intervals\":[" +
          std::string(kMaxLineBytes, '1') + "]}],\"pid\":77,\"x_kernels\":3}\n";
  text += "{\"t\":1800000001.0,\"mark\":\"step\"}\n";
  auto trace = read_trace_string(text, "old.jsonl");
  ASSERT_TRUE(trace) << trace.error().message;
  EXPECT_EQ(trace->marks.size(), 1u);
  const auto v = analyze_kernels(*trace);
  ASSERT_TRUE(v.has_value());
  ASSERT_FALSE(v->notes.empty());
  EXPECT_NE(v->notes[0].find("a kernel record at old.jsonl:2 not read: longer than"),
            std::string::npos)
      << v->notes[0];
}

TEST(ChunkRecord, AKernelLineTheReaderRefusesIsSaidInTheViewAndTheRestStays) {
  inject::ChunkBuilder c(0);
  inject::KernelLaunch k;
  k.name = "gemm";
  c.kernel(k, 1000, 2000, 7);
  std::string text = "{\"format\":\"gpu-trace\",\"version\":1,\"host\":\"h\",\"devices\":[]}\n";
  for (const auto& l : testing::process_lines(c)) text += l.dump() + "\n";
  // Someone else's writer: a chunk cut short, then a line past the reader's limit.
  text += "{\"x_kernels\":4,\"record\":\"chunk\",\"pid\":7,\"seq\":1,\"kernels\":[[0,1\n";
  text += "{\"x_kernels\":4,\"record\":\"chunk\",\"pid\":8,\"busy\":\"" +
          std::string(kMaxLineBytes, 'x') + "\"}\n";
  text += "{\"t\":1800000001.0,\"mark\":\"step\"}\n";
  auto trace = read_trace_string(text, "k.jsonl");  // not lenient: still read
  ASSERT_TRUE(trace) << trace.error().message;
  EXPECT_EQ(trace->marks.size(), 1u);
  const auto v = analyze_kernels(*trace);
  ASSERT_TRUE(v && v->available);
  EXPECT_EQ(v->launches, 1u);
  std::string notes;
  for (const auto& n : v->notes) notes += n + "\n";
  EXPECT_NE(notes.find("a kernel record of process 7 at k.jsonl:6 not read"), std::string::npos)
      << notes;
  EXPECT_NE(notes.find("a kernel record of process 8 at k.jsonl:7 not read: longer than"),
            std::string::npos)
      << notes;
}

}  // namespace
}  // namespace gpulens::kernels
