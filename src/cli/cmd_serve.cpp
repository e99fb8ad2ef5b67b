// SPDX-License-Identifier: Apache-2.0
// `gpulens serve`: the node agent. Samples every GPU (or replays a recording),
// diagnoses, keeps history in SQLite, and serves /metrics, /api/v1/ and the
// dashboard. Secure by default: loopback only unless --listen says otherwise.
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "agent/agent.hpp"
#include "agent/kernel_history.hpp"
#include "agent/kernel_receiver.hpp"
#include "agent/kernel_series.hpp"
#include "agent/kernel_store.hpp"
#include "agent/log.hpp"
#include "agent/reload_signal.hpp"
#include "cli/command.hpp"
#include "cli/gpu_price_book.hpp"
#include "cli/signals.hpp"
#include "cli/terminal_output.hpp"
#include "core/clock.hpp"
#include "core/duration.hpp"
#include "diagnosis/config.hpp"
#include "exposition/http_server.hpp"
#include "http/basic_auth.hpp"
#include "store/history_time.hpp"
#include "store/store_writer.hpp"

namespace gpulens::cli {
namespace {

struct ServeArgs {
  sampler::SourceOptions source;
  exposition::ServerOptions server;
  std::string compat;
  std::string history;
  bool no_history = false;
  std::string raw_retention = "48h";
  std::string rollup_retention = "90d";
  double max_size_mib = 2048;
  std::string config;
  std::string data_dir;
  std::string hostname;
  std::string log_level = "info";
  std::string request_timeout = "15s";
  std::string kube_log_dir = "/var/log";
  bool kube_log_dir_given = false;
  bool exit_at_end = false;
  bool hash_password = false;
  std::string kernels_socket;  // empty: jobs' kernel summaries are not received
  std::string kernels_socket_mode = "0666";
  std::size_t kernels_windows = agent::kKernelWindowsPerGpu;
  std::size_t kernels_top = agent::kKernelSeriesTop;
};

int run_hash_password() {
  std::string password;
  if (isatty(STDIN_FILENO)) eprint("password: ");
  std::getline(std::cin, password);
  if (password.empty()) {
    eprint("gpulens serve: an empty password is not allowed\n");
    return kExitUsage;
  }
  const std::string hash = http::hash_password(password);
  if (hash.empty()) {
    eprint("gpulens serve: libcrypt could not make a bcrypt hash\n");
    return kExitFailure;
  }
  std::printf("%s\n", hash.c_str());
  return kExitOk;
}

bool is_loopback(const std::string& listen) {
  const auto hp = exposition::parse_listen(listen);
  if (!hp) return false;
  const auto& host = hp->first;
  return host == "localhost" || host == "::1" || host.starts_with("127.");
}

agent::LogLevel log_level_named(const std::string& name) {
  return name == "debug"     ? agent::LogLevel::Debug
         : name == "warning" ? agent::LogLevel::Warning
         : name == "error"   ? agent::LogLevel::Error
                             : agent::LogLevel::Info;
}

// The flags that only change what is shown: the log, dcgm-exporter names, command lines.
void apply_output_flags(ServeArgs& args) {
  agent::set_log_level(log_level_named(args.log_level));
  if (args.compat == "dcgm") args.server.exposition.dcgm = true;
  args.server.show_cmdline = args.source.cmdline;
}

// --history-raw, --history-rollup, --history-max-size and --request-timeout into
// the store's and the server's options; false after saying which is wrong.
bool read_limits(ServeArgs& args, store::StoreOptions& store_options) {
  const auto raw = parse_duration(args.raw_retention);
  const auto rollup = parse_duration(args.rollup_retention);
  if (!raw || !rollup || *raw <= 0 || *rollup <= 0) {
    eprint(
        "gpulens serve: --history-raw/--history-rollup take durations such as "
        "48h or 90d\n");
    return false;
  }
  const auto request_timeout = parse_duration(args.request_timeout);
  if (!request_timeout || *request_timeout < 0.1 || *request_timeout > 3600) {
    eprint(
        "gpulens serve: --request-timeout takes a duration from 100ms to 1h, "
        "such as 15s\n");
    return false;
  }
  args.server.request_timeout =
      std::chrono::milliseconds(static_cast<std::int64_t>(*request_timeout * 1000));
  store_options.raw_retention_s = *raw;
  store_options.rollup_retention_s = *rollup;
  store_options.max_bytes = static_cast<std::int64_t>(args.max_size_mib * 1024 * 1024);
  return true;
}

// The diagnosis settings of --config, or the defaults; nullopt after saying why not.
std::optional<diagnosis::DiagnosisConfig> load_diagnosis(const std::string& path) {
  if (path.empty()) return diagnosis::DiagnosisConfig::defaults();
  auto loaded = diagnosis::load_diagnosis_config(path);
  if (!loaded) {
    eprint("gpulens serve: {}\n", loaded.error().message);
    return std::nullopt;
  }
  return std::move(*loaded);
}

// GPU prices for the cost metrics: the built-in tables or --data-dir's, with the
// config's price_per_gpu_hour over both. Shared with the reload handler.
std::shared_ptr<GpuPriceBook> open_price_book(const ServeArgs& args,
                                              const diagnosis::DiagnosisConfig& diagnosis) {
  ReportTables tables = load_report_tables(args.data_dir);
  for (const auto& w : tables.warnings) agent::log_warning("price table: {}", w);
  auto prices = std::make_shared<GpuPriceBook>(std::move(tables));
  prices->set_override(diagnosis.price_per_gpu_hour, diagnosis.currency, "config " + args.config);
  return prices;
}

std::function<std::optional<exposition::GpuPrice>(const std::string&)> price_lookup(
    std::shared_ptr<GpuPriceBook> prices) {
  return [prices](const std::string& device_name) -> std::optional<exposition::GpuPrice> {
    const auto q = prices->price_of(device_name);
    if (!q) return std::nullopt;
    return exposition::GpuPrice{q->per_hour, q->currency};
  };
}

// Where the history goes: --history, a private temporary directory for a replay
// (named in `temporary_dir`, removed at the end), or the node's own; nowhere with
// --no-history. False after saying why the temporary directory could not be made.
bool choose_history(const ServeArgs& args, bool replay, store::StoreOptions& store_options,
                    std::string& temporary_dir) {
  if (args.no_history) return true;
  if (!args.history.empty()) {
    store_options.path = args.history;
  } else if (replay) {
    // A replay's old timestamps do not belong in the node's real history. A
    // private directory (mkdtemp, 0700): a predictable name in /tmp let another
    // user plant a symlink or their own -wal/-shm files there first.
    std::string dir = (std::filesystem::temp_directory_path() / "gpulens-replay-XXXXXX").string();
    if (::mkdtemp(dir.data()) == nullptr) {
      eprint("gpulens serve: cannot create a temporary history directory: {}\n",
             std::strerror(errno));
      return false;
    }
    temporary_dir = dir;
    store_options.path = dir + "/history.db";
  } else {
    store_options.path = store::default_history_path();
  }
  return true;
}

void remove_temporary_history(const std::string& path, const std::string& dir) {
  std::error_code ec;
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix, ec);
  std::filesystem::remove(dir, ec);
}

// The history writer, none without a history path; it logs through the agent's log.
std::unique_ptr<store::StoreWriter> open_history_writer(const store::StoreOptions& store_options) {
  if (store_options.path.empty()) return nullptr;
  return std::make_unique<store::StoreWriter>(
      store_options, store::WriterOptions{}, [](bool error, const std::string& message) {
        agent::log_line(error ? agent::LogLevel::Error : agent::LogLevel::Info, message);
      });
}

agent::AgentOptions agent_options_for(const ServeArgs& args,
                                      const diagnosis::DiagnosisConfig& diagnosis, bool replay) {
  agent::AgentOptions agent_options;
  agent_options.diagnosis = diagnosis;
  agent_options.hostname = args.hostname;
  agent_options.keep_cmdline = args.source.cmdline;
  // A recording's processes ran on another machine: this node's pods do not name
  // them, unless the user hands over that machine's (or a made-up) kubelet log tree.
  if (!replay || args.kube_log_dir_given) agent_options.kube_log_dir = args.kube_log_dir;
  agent_options.source_description =
      replay ? fmt::format("replay of {} at {}", args.source.replay,
                           args.source.speed == 0 ? std::string("full speed")
                                                  : fmt::format("{:g}x", args.source.speed))
             : fmt::format("live NVML every {:g} s", args.source.interval_s);
  return agent_options;
}

// The jobs' kernel summaries (--kernels-socket, docs/kernels-agent.md): the
// socket bound and its thread started, or nothing when not asked for. False after
// saying why it could not be bound.
// The GPUs whose kernel windows are read back from the history: the agent's own
// (a recording whose header lists none: the first 64 indexes).
std::vector<int> history_gpus(const TraceHeader& header) {
  std::vector<int> gpus;
  for (const auto& d : header.devices) gpus.push_back(d.index);
  if (gpus.empty()) {
    for (int i = 0; i < 64; ++i) gpus.push_back(i);
  }
  return gpus;
}

bool start_kernel_receiver(const ServeArgs& args, agent::Agent* agent, agent::KernelStore& store,
                           agent::KernelSeries& series, store::StoreWriter* history,
                           std::unique_ptr<agent::KernelReceiver>& out) {
  if (args.kernels_socket.empty()) return true;
  agent::ReceiverOptions options;
  options.path = args.kernels_socket;
  const std::string& mode = args.kernels_socket_mode;
  if (mode.empty() || mode.size() > 4 || mode.find_first_not_of("01234567") != std::string::npos) {
    eprint("gpulens serve: --kernels-socket-mode takes an octal mode such as 0666 or 0660\n");
    return false;
  }
  options.mode = static_cast<mode_t>(std::stoul(mode, nullptr, 8));
  auto receiver = agent::KernelReceiver::start(
      options, store, [agent] { return agent->snapshot(); }, &series, history);
  if (!receiver) {
    eprint("gpulens serve: {}\n", receiver.error().message);
    return false;
  }
  out = std::move(*receiver);
  return true;
}

// What the HTTP side reads: the agent's snapshot and the writer's status.
exposition::ApiContext api_context(agent::Agent* agent, store::StoreWriter* writer,
                                   const std::string& history_path,
                                   const agent::KernelStore* kernels, agent::KernelSeries* series,
                                   const agent::KernelReceiver* receiver,
                                   const agent::KernelHistoryCounts* loaded) {
  exposition::ApiContext context;
  if (receiver != nullptr) {
    context.kernels = kernels;
    context.kernel_status = [kernels, receiver, writer,
                             loaded]() -> std::optional<agent::KernelIntakeStatus> {
      agent::KernelHistoryCounts history = *loaded;
      if (writer != nullptr) {
        const auto st = writer->status();
        history.written = st.kernel_windows_written;
        history.dropped = st.dropped_kernel_windows;
      }
      return agent::KernelIntakeStatus{receiver->path(), receiver->counters(),
                                       kernels->size(),  kernels->windows_per_gpu(),
                                       kernels->bytes(), history};
    };
    context.kernel_series = [series]() -> std::optional<exposition::KernelSeriesStatus> {
      return exposition::KernelSeriesStatus{series->rows(monotonic_now()), series->retired()};
    };
  }
  context.history_path = history_path;
  context.snapshot = [agent] { return agent->snapshot(); };
  context.store_status = [writer]() -> std::optional<store::StoreStatus> {
    if (writer == nullptr) return std::nullopt;
    return writer->status();
  };
  return context;
}

// The server, bound (so "address in use" comes before serving); kExitOk, or the
// exit code after saying what went wrong.
int open_server(const exposition::ServerOptions& options, const exposition::ApiContext& context,
                std::unique_ptr<exposition::HttpServer>& out) {
  auto server = exposition::HttpServer::create(options, context);
  if (!server) {
    eprint("gpulens serve: {}\n", server.error().message);
    return kExitUsage;
  }
  if (auto bound = (*server)->bind(); !bound) {
    eprint("gpulens serve: {}\n", bound.error().message);
    return kExitFailure;
  }
  out = std::move(*server);
  return kExitOk;
}

// SIGTERM/SIGINT stop the agent and the server; SIGHUP re-reads the web config
// and the diagnosis config (with its price).
void handle_signals(agent::Agent* agent, exposition::HttpServer* http,
                    const std::string& config_path, std::shared_ptr<GpuPriceBook> prices) {
  on_stop_signal([agent, http] {
    agent::log_info("stopping: flushing history");
    agent->stop();
    http->stop();
  });
  agent::on_reload_signal([http, agent, config_path, prices] {
    agent::log_info("SIGHUP: reloading configuration");
    if (auto s = http->reload(); !s) {
      agent::log_error("web config not reloaded: {}", s.error().message);
    } else {
      agent::log_info("web config reloaded");
    }
    if (!config_path.empty()) {
      auto loaded = diagnosis::load_diagnosis_config(config_path);
      if (!loaded) {
        agent::log_error("diagnosis config not reloaded: {}", loaded.error().message);
      } else {
        prices->set_override(loaded->price_per_gpu_hour, loaded->currency, "config " + config_path);
        agent->reload(std::move(*loaded));
      }
    }
  });
}

// With --exit-at-end: the server stops once the agent's source has ended.
std::thread watch_end(bool exit_at_end, agent::Agent* agent, exposition::HttpServer* http) {
  if (!exit_at_end) return {};
  return std::thread([agent, http] {
    agent->join();
    http->stop();
  });
}

// What is served, from where, how safely, and at what prices.
void log_serving(const ServeArgs& args, const agent::Agent& agent,
                 const exposition::HttpServer& http, const std::string& source_description,
                 bool history, const GpuPriceBook& prices) {
  const auto& header = agent.header();
  agent::log_info("gpulens {} serving {} GPU(s) from {} on {} (TLS {}, basic auth {}{})",
                  GPULENS_VERSION, header.devices.size(), source_description, http.url(),
                  http.tls() ? "on" : "off", http.auth() ? "on" : "off",
                  args.server.exposition.dcgm ? ", dcgm-exporter names too" : "");
  if (!is_loopback(args.server.listen) && !(http.tls() && http.auth())) {
    agent::log_warning(
        "listening beyond this machine without {}: anyone who can reach {} can read "
        "the GPU metrics; see --web-config in docs/serve.md",
        http.tls() ? "basic auth" : "TLS", http.url());
  }
  if (!history) agent::log_info("history disabled (--no-history)");
  if (!args.kernels_socket.empty()) {
    agent::log_info("receiving jobs' kernel summaries on {} (mode {}; /api/v1/kernels)",
                    args.kernels_socket, args.kernels_socket_mode);
  }
  std::vector<std::string> device_names;
  for (const auto& d : header.devices) device_names.push_back(d.name);
  agent::log_info("prices: {}", prices.describe(device_names));
}

int run_serve(ServeArgs& args) {
  if (args.hash_password) return run_hash_password();
  agent::block_reload_signal();  // before any thread starts
  apply_output_flags(args);
  store::StoreOptions store_options;
  if (!read_limits(args, store_options)) return kExitUsage;
  const auto diagnosis = load_diagnosis(args.config);
  if (!diagnosis) return kExitUsage;
  const auto prices = open_price_book(args, *diagnosis);
  args.server.exposition.price_of = price_lookup(prices);

  auto source = open_source_or_explain(args.source);
  if (!source) return exit_for_unopened_source(args.source);
  const bool replay = !source->live();
  std::string temporary_dir;
  if (!choose_history(args, replay, store_options, temporary_dir)) return kExitFailure;
  auto writer = open_history_writer(store_options);
  const agent::AgentOptions agent_options = agent_options_for(args, *diagnosis, replay);
  auto agent = std::make_unique<agent::Agent>(std::move(source), agent_options, writer.get());
  agent::KernelStore kernel_store(args.kernels_windows);
  agent::KernelSeriesOptions series_options;
  series_options.top = args.kernels_top;
  agent::KernelSeries kernel_series(series_options);
  // Read back before the receiver adds new ones, so the ring stays in time order.
  agent::KernelHistoryCounts kernel_history;
  if (!args.kernels_socket.empty()) {
    agent::load_kernel_history(store_options, kernel_store, kernel_history,
                               history_gpus(agent->header()));
  }
  std::unique_ptr<agent::KernelReceiver> receiver;
  if (!start_kernel_receiver(args, agent.get(), kernel_store, kernel_series, writer.get(),
                             receiver)) {
    return kExitFailure;
  }
  std::unique_ptr<exposition::HttpServer> http;
  const int opened =
      open_server(args.server,
                  api_context(agent.get(), writer.get(), store_options.path, &kernel_store,
                              &kernel_series, receiver.get(), &kernel_history),
                  http);
  if (opened != kExitOk) return opened;

  if (writer) writer->start(agent->header());
  agent->start();
  handle_signals(agent.get(), http.get(), args.config, prices);
  std::thread end_watch = watch_end(args.exit_at_end, agent.get(), http.get());
  log_serving(args, *agent, *http, agent_options.source_description, !store_options.path.empty(),
              *prices);
  http->serve();  // returns after stop()

  // From here a signal must not reach objects about to be destroyed.
  on_stop_signal({});
  agent::on_reload_signal({});
  agent->stop();
  if (receiver) receiver->stop();
  if (end_watch.joinable()) end_watch.join();
  if (writer) writer->stop();
  if (!temporary_dir.empty()) remove_temporary_history(store_options.path, temporary_dir);
  agent::log_info("stopped");
  const auto snap = agent->snapshot();
  return snap->source.error.empty() ? kExitOk : kExitFailure;
}

}  // namespace

void register_serve(CLI::App& app, std::function<int()>& run) {
  auto args = std::make_shared<ServeArgs>();
  auto* cmd = app.add_subcommand("serve", kServeDescription);
  // Here too, not only on `gpulens`: the agent is often the one binary a node has
  // (the container image, the package's service), and `gpulens serve --version`
  // reaches this binary.
  cmd->set_version_flag("--version", "gpulens-serve " GPULENS_VERSION);
  add_source_options(*cmd, args->source, /*offline=*/false);
  cmd->add_option("--listen", args->server.listen,
                  "HOST:PORT to listen on (':9401' for every interface; port 0 picks one)")
      ->capture_default_str();
  cmd->add_option("--web-config", args->server.web_config,
                  "exporter-toolkit web config (tls_server_config, basic_auth_users)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--compat", args->compat,
                  "Also emit another exporter's metric names: dcgm (dcgm-exporter)")
      ->check(CLI::IsMember({"dcgm"}));
  cmd->add_flag("--process-metrics", args->server.exposition.process_metrics,
                "Per-process device memory and SM share in /metrics (labels pid, process, "
                "container_id, pod_uid, namespace, pod, container)");
  cmd->add_option("--history", args->history,
                  "History database file (default: $STATE_DIRECTORY, /var/lib/gpulens or "
                  "~/.local/state/gpulens; a temporary file with --replay)");
  cmd->add_flag("--no-history", args->no_history, "Keep no history");
  cmd->add_option("--history-raw", args->raw_retention, "How long raw samples are kept")
      ->capture_default_str();
  cmd->add_option("--history-rollup", args->rollup_retention,
                  "How long one-minute rollups are kept")
      ->capture_default_str();
  cmd->add_option("--history-max-size", args->max_size_mib,
                  "Largest the history file may grow, in MiB (oldest data goes first)")
      ->check(CLI::Range(1.0, 1e7))
      ->capture_default_str();
  cmd->add_option("--config", args->config, "Diagnosis and alert settings (TOML)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--data-dir", args->data_dir,
                  "Directory with prices.json and gpu_peaks.json overriding the built-in "
                  "tables (also $GPULENS_DATA_DIR, /etc/gpulens); the config's "
                  "price_per_gpu_hour overrides both")
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--hostname", args->hostname,
                  "Value of the hostname label (default: the host's)");
  cmd->add_option("--request-timeout", args->request_timeout,
                  "Longest a request may take from its first byte to its answer's last "
                  "(a client that sends slowly is cut off)")
      ->capture_default_str();
  cmd->add_option("--kube-log-dir", args->kube_log_dir,
                  "Where the kubelet's containers/ and pods/ log directories are: they name "
                  "the pods, namespaces and containers of GPU processes ('' for none; "
                  "with --replay only when given)")
      ->capture_default_str()
      ->each([args](const std::string&) { args->kube_log_dir_given = true; });
  cmd->add_option("--kernels-socket", args->kernels_socket,
                  "Unix socket where jobs that opted in send their kernel summaries "
                  "(GPULENS_KERNELS_AGENT: /api/v1/kernels, kept in the history too) and their "
                  "launch counts (GPULENS_LAUNCHES_AGENT: gpulens_kernel_launches_total in "
                  "/metrics); its directory must exist (e.g. /run/gpulens/kernels.sock; "
                  "docs/kernels-agent.md)");
  cmd->add_option("--kernels-socket-mode", args->kernels_socket_mode,
                  "Permissions of --kernels-socket (octal): who may send; the sender's PID comes "
                  "from the kernel whatever the mode")
      ->capture_default_str();
  cmd->add_option("--kernels-windows", args->kernels_windows,
                  "Kernel summary windows kept in memory per GPU (the oldest go first); as many "
                  "are read back from the history on start")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  cmd->add_option("--kernels-top", args->kernels_top,
                  "Kernels per GPU with a series of their own in /metrics "
                  "(gpulens_kernel_seconds_total, and gpulens_kernel_launches_total apart); the "
                  "rest are kernel=\"other\"")
      ->check(CLI::Range(0, 50))
      ->capture_default_str();
  cmd->add_option("--threads", args->server.threads, "HTTP worker threads")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd->add_option("--log-level", args->log_level, "debug, info, warning or error")
      ->check(CLI::IsMember({"debug", "info", "warning", "error"}))
      ->capture_default_str();
  cmd->add_flag("--exit-at-end", args->exit_at_end,
                "With --replay: stop when the recording ends (history flushed)");
  cmd->add_flag("--hash-password", args->hash_password,
                "Read a password on stdin, print its bcrypt hash for basic_auth_users, exit");
  cmd->callback([args, &run] { run = [args] { return run_serve(*args); }; });
}

}  // namespace gpulens::cli
