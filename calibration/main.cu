// SPDX-License-Identifier: Apache-2.0
// gpulens-workload: runs known GPU workloads, phase after phase, and writes
// marks around each so a recording of the GPU's counters can be labelled.
#include "marks.hpp"
#include "workloads.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

volatile std::sig_atomic_t g_signal = 0;

extern "C" void on_signal(int sig) {
    g_signal = sig;
    gw::g_stop = 1;  // loops finish their launch and write the :end mark
}

void usage(FILE* out) {
    std::fprintf(out,
                 "usage: gpulens-workload [--marks PATH] [--seconds S] [--gap S] [--device N]\n"
                 "                        PHASE [PHASE...] | all\n"
                 "\n"
                 "Runs GPU workloads of known behaviour, one phase after another, and writes\n"
                 "{\"t\": <unix s>, \"mark\": \"PHASE:start\"} / \"PHASE:end\" marks (JSON lines,\n"
                 "appended, flushed at once) around each, for labelling gpu-trace recordings.\n"
                 "\n"
                 "  --marks PATH   marks file ('-' = stdout; default: $GPULENS_MARKS, else none)\n"
                 "  --seconds S    length of each phase (default 8)\n"
                 "  --gap S        idle time between phases (default 1)\n"
                 "  --device N     CUDA device index (default 0)\n"
                 "  --list         print the phase names, one per line, and exit\n"
                 "  -h, --help     this text\n"
                 "\n"
                 "phases ('all' runs those marked *, in this order):\n");
    for (const auto& p : gw::phase_table())
        std::fprintf(out, "  %c %-16s %s\n", p.in_all ? '*' : ' ', p.name, p.help);
}

[[noreturn]] void bad_usage(const std::string& msg) {
    std::fprintf(stderr, "gpulens-workload: %s (try --help)\n", msg.c_str());
    std::exit(2);
}

double parse_number(const std::string& opt, const char* text, double min) {
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(text, &end);
    if (errno != 0 || end == text || *end != '\0' || !(v >= min))
        bad_usage("bad value for " + opt + ": '" + text + "'");
    return v;
}

struct Options {
    std::string marks_path;
    double seconds = 8.0;
    double gap = 1.0;
    int device = 0;
    std::vector<const gw::PhaseInfo*> phases;
};

Options parse(int argc, char** argv) {
    Options o;
    if (const char* env = std::getenv("GPULENS_MARKS")) o.marks_path = env;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i], val;
        const bool has_eq = a.rfind("--", 0) == 0 && a.find('=') != std::string::npos;
        if (has_eq) {
            val = a.substr(a.find('=') + 1);
            a = a.substr(0, a.find('='));
        }
        auto value = [&]() -> std::string {
            if (has_eq) return val;
            if (i + 1 >= argc) bad_usage("missing value for " + a);
            return argv[++i];
        };
        if (a == "-h" || a == "--help") {
            usage(stdout);
            std::exit(0);
        } else if (a == "--list") {
            for (const auto& p : gw::phase_table()) std::printf("%s\n", p.name);
            std::exit(0);
        } else if (a == "--marks") {
            o.marks_path = value();
        } else if (a == "--seconds") {
            o.seconds = parse_number(a, value().c_str(), 0.001);
        } else if (a == "--gap") {
            o.gap = parse_number(a, value().c_str(), 0.0);
        } else if (a == "--device") {
            const double d = parse_number(a, value().c_str(), 0.0);
            if (d != static_cast<int>(d)) bad_usage("bad value for --device");
            o.device = static_cast<int>(d);
        } else if (a.rfind("-", 0) == 0) {
            bad_usage("unknown option '" + a + "'");
        } else if (a == "all") {
            for (const auto& p : gw::phase_table())
                if (p.in_all) o.phases.push_back(&p);
        } else if (const gw::PhaseInfo* p = gw::find_phase(a)) {
            o.phases.push_back(p);
        } else {
            bad_usage("unknown phase '" + a + "'");
        }
    }
    if (o.phases.empty()) bad_usage("no phase given");
    return o;
}

}  // namespace

int main(int argc, char** argv) {
    const Options opt = parse(argc, argv);

    if (!gw::marks().open(opt.marks_path)) {
        std::fprintf(stderr, "gpulens-workload: cannot open marks file '%s': %s\n",
                     opt.marks_path.c_str(), std::strerror(errno));
        return 2;
    }

    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);

    int count = 0;
    CUDA_CHECK(cudaGetDeviceCount(&count));
    if (opt.device >= count)
        gw::fatal("device " + std::to_string(opt.device) + " does not exist (" +
                  std::to_string(count) + " CUDA device(s))");
    CUDA_CHECK(cudaSetDevice(opt.device));
    // Waiting threads sleep instead of spinning: CPU use then tells "host busy"
    // (host_bound, starved, launching tiny kernels) apart from "host waiting
    // on the GPU", as in a well-behaved training job.
    CUDA_CHECK(cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync));
    CUDA_CHECK(cudaFree(nullptr));  // create the context now, before any mark

    gw::Ctx ctx;
    ctx.device = opt.device;
    ctx.seconds = opt.seconds;
    CUDA_CHECK(cudaGetDeviceProperties(&ctx.prop, opt.device));
    CUDA_CHECK(cudaStreamCreateWithFlags(&ctx.stream, cudaStreamNonBlocking));
    std::fprintf(stderr, "gpulens-workload: device %d: %s, %d SMs, %.1f GiB, sm_%d%d; %zu phase(s) "
                 "of %.2f s, %.2f s apart\n",
                 opt.device, ctx.prop.name, ctx.prop.multiProcessorCount,
                 static_cast<double>(ctx.prop.totalGlobalMem) / gw::kGiB, ctx.prop.major,
                 ctx.prop.minor, opt.phases.size(), opt.seconds, opt.gap);

    for (std::size_t i = 0; i < opt.phases.size() && !gw::stop_requested(); ++i) {
        if (i > 0) gw::sleep_for(opt.gap);
        if (gw::stop_requested()) break;
        opt.phases[i]->run(ctx, *opt.phases[i]);
    }
    ctx.release();

    if (g_signal != 0) {
        std::fprintf(stderr, "gpulens-workload: stopped by signal %d\n", static_cast<int>(g_signal));
        return 128 + g_signal;
    }
    return 0;
}
