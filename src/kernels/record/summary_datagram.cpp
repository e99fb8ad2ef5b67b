// SPDX-License-Identifier: Apache-2.0
#include "kernels/record/summary_datagram.hpp"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "kernels/record/kernel_names.hpp"

namespace gpulens::kernels {
namespace {

using json = nlohmann::json;

// The datagram's keys, spelled here only.
namespace skey {
constexpr const char* version = "x_kernel_summary";
constexpr const char* seq = "seq";
constexpr const char* start = "start_unix_ns";
constexpr const char* end = "end_unix_ns";
constexpr const char* window = "window";
constexpr const char* cupti_dropped = "cupti_dropped";
constexpr const char* summaries_dropped = "summaries_dropped";
constexpr const char* devices = "devices";
constexpr const char* device = "device";
constexpr const char* busy_ns = "busy_ns";
constexpr const char* idle_ns = "idle_ns";
constexpr const char* top = "top";
constexpr const char* name = "name";
constexpr const char* launches = "launches";
constexpr const char* ns = "ns";
constexpr const char* other = "other";
constexpr const char* kernels = "kernels";
constexpr const char* collectives = "collectives";
constexpr const char* copies = "copies";
constexpr const char* memsets = "memsets";
constexpr const char* count = "count";
constexpr const char* bytes = "bytes";
}  // namespace skey

// Busy time of a sketch inside [start, end]: the spans' lengths less the gaps
// the sketch closed (those were idle).
std::uint64_t busy_inside(const std::vector<SketchSpan>& spans, std::int64_t start,
                          std::int64_t end) {
  std::uint64_t busy = 0;
  for (const auto& s : spans) {
    const std::int64_t a = std::max(s.start, start), b = std::min(s.end, end);
    if (b <= a) continue;
    const auto len = static_cast<std::uint64_t>(b - a);
    // A span cut by the window keeps its closed gaps in proportion.
    const auto whole = static_cast<std::uint64_t>(s.end - s.start);
    const std::uint64_t gaps =
        whole == 0
            ? 0
            : static_cast<std::uint64_t>(static_cast<double>(s.gap_ns) * static_cast<double>(len) /
                                         static_cast<double>(whole));
    busy += len > gaps ? len - gaps : 0;
  }
  return busy;
}

// Moves the kernels past `keep` of each device's top list into its `other`.
void fold_top(DeviceWork& d, std::size_t keep) {
  while (d.top.size() > keep) {
    const KernelTime& k = d.top.back();
    ++d.other_kernels;
    d.other_launches += k.launches;
    d.other_ns += k.ns;
    d.top.pop_back();
  }
}

json work_json(const WorkTotal& w, bool with_bytes) {
  json j = {{skey::count, w.count}, {skey::ns, w.ns}};
  if (with_bytes) j[skey::bytes] = w.bytes;
  return j;
}

json to_json(const WindowSummary& s) {
  json devices = json::array();
  for (const auto& d : s.devices) {
    json top = json::array();
    for (const auto& k : d.top) {
      top.push_back({{skey::name, k.name}, {skey::launches, k.launches}, {skey::ns, k.ns}});
    }
    devices.push_back({{skey::device, d.device},
                       {skey::busy_ns, d.busy_ns},
                       {skey::idle_ns, d.idle_ns},
                       {skey::top, std::move(top)},
                       {skey::other,
                        {{skey::kernels, d.other_kernels},
                         {skey::launches, d.other_launches},
                         {skey::ns, d.other_ns}}},
                       {skey::collectives, work_json(d.collectives, false)},
                       {skey::copies, work_json(d.copies, true)},
                       {skey::memsets, work_json(d.memsets, true)}});
  }
  return {{skey::version, kSummaryVersion},
          {skey::seq, s.seq},
          {skey::start, s.start_unix_ns},
          {skey::end, s.end_unix_ns},
          {skey::window, s.window},
          {skey::cupti_dropped, s.cupti_dropped},
          {skey::summaries_dropped, s.summaries_dropped},
          {skey::devices, std::move(devices)}};
}

// The strict reader: every field present, of its type, within its bounds.
class Reader {
 public:
  std::string why;

  bool fail(std::string what) {
    if (why.empty()) why = std::move(what);
    return false;
  }

  bool count(const json& obj, const char* key, std::uint64_t& out) {
    const auto it = obj.find(key);
    if (it == obj.end() || !it->is_number_unsigned()) {
      return fail(std::string("`") + key + "` is not a count");
    }
    out = it->get<std::uint64_t>();
    return true;
  }

  bool time(const json& obj, const char* key, std::int64_t& out) {
    const auto it = obj.find(key);
    if (it == obj.end() || !it->is_number_integer()) {
      return fail(std::string("`") + key + "` is not a time in ns");
    }
    out = it->get<std::int64_t>();
    return true;
  }

  const json* object(const json& obj, const char* key) {
    const auto it = obj.find(key);
    if (it == obj.end() || !it->is_object()) {
      fail(std::string("`") + key + "` is not an object");
      return nullptr;
    }
    return &*it;
  }

  const json* array(const json& obj, const char* key, std::size_t max) {
    const auto it = obj.find(key);
    if (it == obj.end() || !it->is_array()) {
      fail(std::string("`") + key + "` is not a list");
      return nullptr;
    }
    if (it->size() > max) {
      fail(std::string("`") + key + "` holds more than " + std::to_string(max) + " entries");
      return nullptr;
    }
    return &*it;
  }

  bool work(const json& d, const char* key, WorkTotal& w, bool with_bytes) {
    const json* o = object(d, key);
    if (o == nullptr) return false;
    if (!count(*o, skey::count, w.count) || !count(*o, skey::ns, w.ns)) return false;
    return !with_bytes || count(*o, skey::bytes, w.bytes);
  }

  bool kernel(const json& k, KernelTime& out) {
    if (!k.is_object()) return fail("a top kernel is not an object");
    const auto n = k.find(skey::name);
    if (n == k.end() || !n->is_string()) return fail("a top kernel's `name` is not a string");
    const auto& name = n->get_ref<const std::string&>();
    if (name.empty() || name.size() > kMaxSummaryNameBytes) {
      return fail("a top kernel's `name` is empty or longer than " +
                  std::to_string(kMaxSummaryNameBytes) + " bytes");
    }
    out.name = name;
    return count(k, skey::launches, out.launches) && count(k, skey::ns, out.ns);
  }

  bool device(const json& d, std::uint64_t window_ns, DeviceWork& out) {
    if (!d.is_object()) return fail("a device is not an object");
    std::uint64_t id = 0;
    if (!count(d, skey::device, id)) return false;
    if (id > 1024) return fail("`device` is not a CUDA device ordinal");
    out.device = static_cast<std::uint32_t>(id);
    if (!count(d, skey::busy_ns, out.busy_ns) || !count(d, skey::idle_ns, out.idle_ns)) {
      return false;
    }
    if (out.busy_ns > window_ns || out.idle_ns > window_ns) {
      return fail("busy or idle time longer than the window");
    }
    const json* top = array(d, skey::top, kMaxSummaryTop);
    if (top == nullptr) return false;
    out.top.resize(top->size());
    for (std::size_t i = 0; i < top->size(); ++i) {
      if (!kernel((*top)[i], out.top[i])) return false;
    }
    const json* other = object(d, skey::other);
    if (other == nullptr) return false;
    if (!count(*other, skey::kernels, out.other_kernels) ||
        !count(*other, skey::launches, out.other_launches) ||
        !count(*other, skey::ns, out.other_ns) ||
        !work(d, skey::collectives, out.collectives, false) ||
        !work(d, skey::copies, out.copies, true) || !work(d, skey::memsets, out.memsets, true)) {
      return false;
    }
    return within_window(out, window_ns);
  }

  // Times and counts a window could hold: a device runs at most
  // kMaxConcurrentWork kernels (or copies, or memsets) at once, each for at most
  // the window, and starts at most one a nanosecond. Past it the sender lied,
  // and its numbers would swamp every sum they join (a 2-s window claimed 1.8e10
  // kernel seconds).
  bool within_window(const DeviceWork& d, std::uint64_t window_ns) {
    if (d.busy_ns + d.idle_ns > window_ns) return fail("busy and idle time add up past the window");
    const std::uint64_t most_ns = window_ns * kMaxConcurrentWork;
    const std::uint64_t most_count = std::max<std::uint64_t>(window_ns, 1);
    std::uint64_t ns = d.other_ns, launches = d.other_launches;
    bool over =
        d.other_ns > most_ns || d.other_launches > most_count || d.other_kernels > most_count;
    for (const auto& k : d.top) {
      over = over || k.ns > most_ns || k.launches > most_count;
      ns = saturating_add(ns, k.ns);
      launches = saturating_add(launches, k.launches);
    }
    over = over || ns > most_ns || launches > most_count;
    for (const WorkTotal* w : {&d.collectives, &d.copies, &d.memsets}) {
      over = over || w->ns > most_ns || w->count > most_count;
    }
    if (over) return fail("kernel times or counts past what the window could hold");
    return true;
  }

  std::optional<WindowSummary> summary(const json& j) {
    if (!j.is_object()) return fail("not a JSON object"), std::nullopt;
    const auto v = j.find(skey::version);
    if (v == j.end() || !v->is_number_integer() || v->get<std::int64_t>() != kSummaryVersion) {
      return fail(std::string("`") + skey::version + "` is not " + std::to_string(kSummaryVersion)),
             std::nullopt;
    }
    WindowSummary s;
    const auto w = j.find(skey::window);
    if (w == j.end() || !w->is_boolean())
      return fail("`window` is not true or false"), std::nullopt;
    s.window = w->get<bool>();
    if (!count(j, skey::seq, s.seq) || !time(j, skey::start, s.start_unix_ns) ||
        !time(j, skey::end, s.end_unix_ns) || !count(j, skey::cupti_dropped, s.cupti_dropped) ||
        !count(j, skey::summaries_dropped, s.summaries_dropped)) {
      return std::nullopt;
    }
    // A window is seconds long; a day is far past any the library closes.
    constexpr std::int64_t kDayNs = 86400LL * 1000000000LL;
    if (s.start_unix_ns <= 0 || s.end_unix_ns < s.start_unix_ns ||
        s.end_unix_ns - s.start_unix_ns > kDayNs) {
      return fail("the window's start and end are not a window"), std::nullopt;
    }
    const json* devices = array(j, skey::devices, kMaxSummaryDevices);
    if (devices == nullptr) return std::nullopt;
    const auto window_ns = static_cast<std::uint64_t>(s.end_unix_ns - s.start_unix_ns);
    s.devices.resize(devices->size());
    for (std::size_t i = 0; i < devices->size(); ++i) {
      if (!device((*devices)[i], window_ns, s.devices[i])) return std::nullopt;
    }
    return s;
  }
};

}  // namespace

std::string cut_name(std::string_view name, std::size_t max_bytes) {
  if (name.size() <= max_bytes) return std::string(name);
  std::size_t n = max_bytes;
  while (n > 0 && (static_cast<unsigned char>(name[n]) & 0xC0) == 0x80) --n;
  return std::string(name.substr(0, n));
}

void SummaryBuilder::add_names(const NamesRecord& names) {
  for (const auto& [id, name] : names.kernel_names) {
    names_[id] = cut_name(name, kMaxSummaryNameBytes);
    collective_[id] = is_collective(name);
  }
  for (const auto& c : names.configs) configs_[c.id] = Config{c.name, c.device};
}

WindowSummary SummaryBuilder::summarise(const ChunkRecord& chunk, std::int64_t base_unix_ns,
                                        std::size_t top) const {
  WindowSummary s;
  s.seq = chunk.seq;
  s.start_unix_ns = base_unix_ns + chunk.start_ns;
  s.end_unix_ns = base_unix_ns + std::max(chunk.end_ns, chunk.start_ns);
  s.window = chunk.window;
  s.cupti_dropped = chunk.dropped;
  std::map<std::uint32_t, DeviceWork> by_device;
  // A kernel's time over its configurations, by (device, name id).
  std::map<std::pair<std::uint32_t, std::uint32_t>, KernelTime> kernels;
  for (const auto& k : chunk.kernels) {
    const auto c = configs_.find(k.config);
    const Config cfg = c != configs_.end() ? c->second : Config{UINT32_MAX, 0};
    KernelTime& t = kernels[{cfg.device, cfg.name}];
    t.launches += k.count;
    t.ns += k.total_ns;
    DeviceWork& d = by_device[cfg.device];
    const auto coll = collective_.find(cfg.name);
    if (coll != collective_.end() && coll->second) {
      d.collectives.count += k.count;
      d.collectives.ns += k.total_ns;
    }
  }
  for (auto& [key, t] : kernels) {
    const auto n = names_.find(key.second);
    t.name = n != names_.end() && !n->second.empty() ? n->second : std::string("(unnamed)");
    by_device[key.first].top.push_back(std::move(t));
  }
  for (const auto& c : chunk.copies) {
    WorkTotal& w = by_device[c.device].copies;
    w.count += c.count, w.bytes += c.bytes, w.ns += c.total_ns;
  }
  for (const auto& m : chunk.memsets) {
    WorkTotal& w = by_device[m.device].memsets;
    w.count += m.count, w.bytes += m.bytes, w.ns += m.total_ns;
  }
  const auto window_ns = static_cast<std::uint64_t>(s.end_unix_ns - s.start_unix_ns);
  for (const auto& b : chunk.busy) by_device[b.device];
  for (auto& [id, d] : by_device) {
    d.device = id;
    for (const auto& b : chunk.busy) {
      if (b.device == id) d.busy_ns += busy_inside(b.spans, chunk.start_ns, chunk.end_ns);
    }
    d.busy_ns = std::min(d.busy_ns, window_ns);
    d.idle_ns = window_ns - d.busy_ns;
    std::sort(d.top.begin(), d.top.end(), [](const KernelTime& a, const KernelTime& b) {
      return a.ns != b.ns ? a.ns > b.ns : a.name < b.name;
    });
    fold_top(d, std::min(top, kMaxSummaryTop));
    s.devices.push_back(std::move(d));
  }
  // The busiest devices, when a process drives more than a summary holds.
  if (s.devices.size() > kMaxSummaryDevices) {
    std::stable_sort(
        s.devices.begin(), s.devices.end(),
        [](const DeviceWork& a, const DeviceWork& b) { return a.busy_ns > b.busy_ns; });
    s.devices.resize(kMaxSummaryDevices);
    std::sort(s.devices.begin(), s.devices.end(),
              [](const DeviceWork& a, const DeviceWork& b) { return a.device < b.device; });
  }
  return s;
}

std::string encode_summary(WindowSummary s) {
  if (s.devices.size() > kMaxSummaryDevices) s.devices.resize(kMaxSummaryDevices);
  for (auto& d : s.devices) {
    fold_top(d, kMaxSummaryTop);
    for (auto& k : d.top) k.name = cut_name(k.name, kMaxSummaryNameBytes);
  }
  for (;;) {
    // Names that are not UTF-8 become U+FFFD rather than an exception in the job.
    std::string text = to_json(s).dump(-1, ' ', false, json::error_handler_t::replace);
    std::size_t longest = 0;
    for (const auto& d : s.devices) longest = std::max(longest, d.top.size());
    if (text.size() <= kMaxSummaryBytes || longest == 0) return text;
    for (auto& d : s.devices) fold_top(d, longest - 1);
  }
}

std::optional<WindowSummary> decode_summary(std::string_view bytes, std::string& why) {
  why.clear();
  if (bytes.size() > kMaxSummaryBytes) {
    why = "longer than " + std::to_string(kMaxSummaryBytes) + " bytes";
    return std::nullopt;
  }
  const json j = json::parse(bytes.begin(), bytes.end(), nullptr, false);
  if (j.is_discarded()) {
    why = "not JSON";
    return std::nullopt;
  }
  Reader r;
  auto s = r.summary(j);
  if (!s) why = r.why;
  return s;
}

}  // namespace gpulens::kernels
