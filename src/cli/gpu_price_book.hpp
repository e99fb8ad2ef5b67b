// SPDX-License-Identifier: Apache-2.0
#pragma once
// The agent's price of one GPU-hour per device, from the same sources as
// `gpulens report`: the diagnosis config's price_per_gpu_hour when set (it
// overrides every GPU), else the price table (prices.json from --data-dir,
// $GPULENS_DATA_DIR, /etc/gpulens or the built-in copy) for the GPU model that
// the peak table matches in the device's NVML name. One price source, so the
// fleet's money panels and a job's report agree without a config file.
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "cli/report_setup.hpp"

namespace gpulens::cli {

struct PriceQuote {
  double per_hour = 0;
  std::string currency;  // ISO 4217 code ("USD"); a config's "$" reads as USD
  std::string source;    // "config /etc/gpulens/gpulens.toml", "data/prices.json: H100 SXM"
};

class GpuPriceBook {
 public:
  explicit GpuPriceBook(ReportTables tables) : tables_(std::move(tables)) {}

  // The config's price for every GPU (nullopt: the table's); replaced on reload.
  void set_override(std::optional<double> per_hour, const std::string& currency,
                    const std::string& source);

  // Thread-safe: called by every scrape. nullopt when the config sets no price
  // and no table row matches the device.
  std::optional<PriceQuote> price_of(const std::string& device_name) const;

  // One line for the agent's log: where the prices come from.
  std::string describe(const std::vector<std::string>& device_names) const;

 private:
  std::optional<PriceQuote> from_table(const std::string& device_name) const;

  ReportTables tables_;
  mutable std::mutex mutex_;
  std::optional<PriceQuote> override_;
  // The table lookup is a regular-expression search per model: done once per name.
  mutable std::map<std::string, std::optional<PriceQuote>> by_name_;
};

// "$" and "" mean US dollars in configs written for the report's text; other
// values are passed on as they are.
std::string currency_code(const std::string& configured);

}  // namespace gpulens::cli
