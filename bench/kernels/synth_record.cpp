// SPDX-License-Identifier: Apache-2.0
// A recording of a long `gpulens run --kernels` job, made without a GPU: samples
// once a second, a step mark every half second, and the kernel record lines the
// injection library would write, made by the same code it runs (inject::ChunkBuilder
// fed kernel by kernel, drained per window or per 2-second chunk, encoded by
// kernels/record/chunk_record.cpp). bench/kernels/report_scale.sh times `gpulens report`
// on what it writes.
//
//   gpulens_synth_kernels --hours 24 --every 20 --window 2 --rate 50000 OUT
//   gpulens_synth_kernels --hours 1 --every 0 --rate 50000 OUT   (traced whole)
#include <fmt/format.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/trace_writer.hpp"
#include "inject/chunk_builder.hpp"
#include "kernels/record/chunk_record.hpp"

namespace {

using namespace gpulens;

struct Options {
  double hours = 24, every_s = 20, window_s = 2, rate = 50000;
  int names = 200;
  std::string out;
};

int usage() {
  std::fprintf(stderr,
               "usage: gpulens_synth_kernels [--hours H] [--every S (0: traced whole)] "
               "[--window S] [--rate KERNELS_PER_S] [--names N] OUT\n");
  return 2;
}

// A training step of `names` kernels of 5 to 200 us, 2 us apart, then 20 ms of
// host work, repeated: a rate of about `rate` kernels a second over the step.
struct Workload {
  std::vector<inject::KernelLaunch> keys;
  std::vector<std::uint64_t> dur_ns;
  std::uint64_t host_gap_ns = 20'000'000;
  explicit Workload(int names) {
    for (int i = 0; i < names; ++i) {
      inject::KernelLaunch k;
      k.name =
          fmt::format("void at::native::vectorized_elementwise_kernel<4, op_{}>(int, float*)", i);
      k.config.grid[0] = static_cast<std::uint32_t>(132 * (1 + i % 8));
      k.config.grid[1] = k.config.grid[2] = 1;
      k.config.block[0] = static_cast<std::uint32_t>(128 << (i % 3));
      k.config.block[1] = k.config.block[2] = 1;
      k.config.registers = 32;
      keys.push_back(std::move(k));
      dur_ns.push_back(5'000 + static_cast<std::uint64_t>((i * 7919) % 195) * 1'000);
    }
  }
};

class Recorder {
 public:
  // Kernel lines go to `side`, appended to the recording at the end as `gpulens
  // run` does.
  Recorder(const Options& o, std::FILE* side) : o_(o), side_(side), work_(o.names), c_(0) {
    kernels::DeviceEntry d;
    d.id = 0, d.name = "NVIDIA H100 80GB HBM3", d.sms = 132, d.max_blocks_per_sm = 32;
    d.max_warps_per_sm = 64, d.max_threads_per_sm = 2048, d.registers_per_sm = 65536;
    d.shared_per_sm = 233472, d.cc_major = 9;
    c_.device(d);
    kernels::ProcessRecord p;
    p.base_unix_ns = kBaseUnixNs;
    if (o.every_s > 0)
      p.sampling = kernels::ProcessRecord::Sampling{o.every_s / 2, o.window_s, o.every_s};
    append(kernels::encode_process(kPid, p));
  }

  // The kernels launched in [from, to) (ns of the process clock) go to the chunk builder.
  void run(std::uint64_t from, std::uint64_t to) {
    // Inside a step, kernels back to back at the asked rate; the step's host gap after.
    const double step_kernel_ns = 1e9 / o_.rate;
    std::uint64_t t = from;
    while (t < to) {
      const std::size_t i = next_++ % work_.keys.size();
      const std::uint64_t d = std::min<std::uint64_t>(
          work_.dur_ns[i], static_cast<std::uint64_t>(step_kernel_ns * 0.8) + 1);
      c_.kernel(work_.keys[i], t, t + d, 7);
      t += static_cast<std::uint64_t>(step_kernel_ns);
      if (next_ % 2000 == 0) {
        c_.sync(3, t, t + 50'000);
        t += work_.host_gap_ns;
      }
    }
  }

  void chunk(std::uint64_t from, std::uint64_t to, bool window) {
    inject::Drained d = c_.drain();
    d.chunk.seq = seq_++;
    d.chunk.start_ns = static_cast<std::int64_t>(from);
    d.chunk.end_ns = static_cast<std::int64_t>(to);
    d.chunk.window = window;
    if (!d.names.empty()) append(kernels::encode_names(kPid, d.chunk.seq, d.names));
    append(kernels::encode_chunk(kPid, d.chunk));
  }

  void finish() {
    kernels::EndRecord e;
    e.nvtx_status = "unused";
    e.chunks = seq_;
    append(kernels::encode_end(kPid, e));
  }

  static constexpr std::int64_t kBaseUnixNs = 1'800'000'000'000'000'000;
  static constexpr std::int64_t kPid = 4242;

 private:
  void append(const std::vector<std::string>& lines) {
    for (const auto& l : lines) std::fprintf(side_, "%s\n", l.c_str());
  }
  const Options& o_;
  std::FILE* side_;
  Workload work_;
  inject::ChunkBuilder c_;
  std::uint64_t seq_ = 0;
  std::size_t next_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> double {
      if (i + 1 >= argc) std::exit(usage());
      return std::atof(argv[++i]);
    };
    if (a == "--hours")
      o.hours = value();
    else if (a == "--every")
      o.every_s = value();
    else if (a == "--window")
      o.window_s = value();
    else if (a == "--rate")
      o.rate = value();
    else if (a == "--names")
      o.names = static_cast<int>(value());
    else if (!a.empty() && a[0] == '-')
      return usage();
    else
      o.out = a;
  }
  if (o.out.empty() || !(o.hours > 0) || !(o.rate > 0) || o.names < 1) return usage();
  TraceHeader h;
  h.host = "synthetic";
  h.interval_s = 1;
  DeviceInfo g;
  g.index = 0;
  g.name = "NVIDIA H100 80GB HBM3";
  g.architecture = "Hopper";
  g.sm_count = 132;
  g.mem_total_mib = 81559;
  g.power_limit_w = 700;
  h.devices.push_back(g);
  auto w = TraceWriter::open(o.out, h);
  if (!w) {
    std::fprintf(stderr, "%s\n", w.error().message.c_str());
    return 1;
  }
  std::FILE* side = std::tmpfile();
  if (side == nullptr) {
    std::perror("tmpfile");
    return 1;
  }
  Recorder rec(o, side);
  const double t0 = static_cast<double>(Recorder::kBaseUnixNs) / 1e9;
  const auto seconds = static_cast<std::uint64_t>(o.hours * 3600);
  std::uint64_t chunk_from = 0;
  for (std::uint64_t s = 0; s < seconds; ++s) {
    Sample sample;
    sample.gpu = 0;
    sample.t = t0 + static_cast<double>(s + 1);
    sample.values.set(Metric::GpuUtil, 97.0);
    sample.values.set(Metric::SmActive, 80.0);
    sample.values.set(Metric::MemUsedMib, 60000.0);
    sample.values.set(Metric::PowerW, 550.0);
    (void)w->write(Mark{t0 + static_cast<double>(s), "step", nlohmann::json::object()});
    (void)w->write(Mark{t0 + static_cast<double>(s) + 0.5, "step", nlohmann::json::object()});
    (void)w->write(sample);
    const std::uint64_t from = s * 1'000'000'000ULL, to = from + 1'000'000'000ULL;
    if (o.every_s <= 0) {
      rec.run(from, to);
      if ((s + 1) % static_cast<std::uint64_t>(kernels::kChunkSeconds) == 0) {
        rec.chunk(chunk_from, to, false);
        chunk_from = to;
      }
      continue;
    }
    // In windows: first at every/2, then every `every` seconds, `window` long.
    const auto every = static_cast<std::uint64_t>(o.every_s * 1e9);
    const auto first = every / 2, len = static_cast<std::uint64_t>(o.window_s * 1e9);
    if (from + 1'000'000'000ULL <= first) continue;
    const std::uint64_t k = (from >= first ? (from - first) / every : 0);
    const std::uint64_t open = first + k * every;
    if (from <= open && open < to) {
      rec.run(open, open + len);
      rec.chunk(open, open + len, true);
    }
  }
  rec.finish();
  (void)w->flush();
  w->close();
  std::FILE* out = std::fopen(o.out.c_str(), "a");
  if (out == nullptr) {
    std::perror(o.out.c_str());
    return 1;
  }
  std::rewind(side);
  char buf[1 << 16];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, side)) > 0;) std::fwrite(buf, 1, n, out);
  std::fclose(side);
  return std::fclose(out) == 0 ? 0 : 1;
}
