// SPDX-License-Identifier: Apache-2.0
// Implementation of common.hpp and marks.hpp.
#include "common.hpp"
#include "marks.hpp"

#include <cmath>
#include <cstdlib>
#include <ctime>
#include <thread>

namespace gw {

volatile std::sig_atomic_t g_stop = 0;

// ---- errors ----------------------------------------------------------------

std::string cuda_msg(cudaError_t e, const char* call, const char* file, int line) {
    return std::string("CUDA error ") + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) +
           ") in " + call + " at " + file + ":" + std::to_string(line);
}

std::string cublas_msg(cublasStatus_t s, const char* call, const char* file, int line) {
    return std::string("cuBLAS error ") + cublasGetStatusName(s) + " (" +
           cublasGetStatusString(s) + ") in " + call + " at " + file + ":" +
           std::to_string(line);
}

void fatal(const std::string& msg) {
    std::fprintf(stderr, "gpulens-workload: error: %s\n", msg.c_str());
    MarkWriter& m = marks();
    if (!m.open_phase().empty()) {
        std::string name = m.open_phase();
        m.set_open_phase("");
        m.write(name + ":end", Fields().str("error", msg));
    }
    std::exit(1);
}

// ---- clocks and waiting ----------------------------------------------------

static double clock_seconds(clockid_t id) {
    timespec ts{};
    clock_gettime(id, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double unix_now() { return clock_seconds(CLOCK_REALTIME); }
double mono_now() { return clock_seconds(CLOCK_MONOTONIC); }

void sleep_for(double seconds) {
    const double end = mono_now() + seconds;
    for (;;) {
        double left = end - mono_now();
        if (left <= 0 || stop_requested()) return;
        std::this_thread::sleep_for(std::chrono::duration<double>(left < 0.01 ? left : 0.01));
    }
}

void host_spin(double seconds) {
    const double end = mono_now() + seconds;
    volatile std::uint64_t x = 0;  // keeps the loop from being optimised away
    while (mono_now() < end && !stop_requested())
        for (int i = 0; i < 1000; ++i) x = x + 1;
}

// ---- marks -----------------------------------------------------------------

std::string json_escape(const std::string& s) {
    std::string out = "\"";
    for (unsigned char c : s) {
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\t': out += "\\t"; break;
            default:
                if (c < 0x20) {
                    char buf[8];
                    std::snprintf(buf, sizeof buf, "\\u%04x", c);
                    out += buf;
                } else {
                    out += static_cast<char>(c);
                }
        }
    }
    return out + "\"";
}

Fields& Fields::num(const std::string& key, double v) {
    // JSON has no NaN/Inf; an unknown figure is left out rather than faked.
    if (!std::isfinite(v)) return *this;
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    items_.emplace_back(key, buf);
    return *this;
}

Fields& Fields::integer(const std::string& key, long long v) {
    items_.emplace_back(key, std::to_string(v));
    return *this;
}

Fields& Fields::str(const std::string& key, const std::string& v) {
    items_.emplace_back(key, json_escape(v));
    return *this;
}

Fields& Fields::boolean(const std::string& key, bool v) {
    items_.emplace_back(key, v ? "true" : "false");
    return *this;
}

MarkWriter::~MarkWriter() {
    if (owned_ && fp_) std::fclose(fp_);
}

bool MarkWriter::open(const std::string& path) {
    if (path.empty()) return true;
    if (path == "-") {
        fp_ = stdout;
        return true;
    }
    fp_ = std::fopen(path.c_str(), "a");
    owned_ = fp_ != nullptr;
    return fp_ != nullptr;
}

void MarkWriter::write(const std::string& mark, const Fields& f) {
    if (!fp_) return;
    std::string line;
    char t[48];
    std::snprintf(t, sizeof t, "%.3f", unix_now());
    line = std::string("{\"t\": ") + t + ", \"mark\": " + json_escape(mark);
    for (const auto& [k, v] : f.items()) line += ", " + json_escape(k) + ": " + v;
    line += "}\n";
    std::fputs(line.c_str(), fp_);
    std::fflush(fp_);
}

MarkWriter& marks() {
    static MarkWriter w;
    return w;
}

}  // namespace gw
