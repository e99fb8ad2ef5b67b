// SPDX-License-Identifier: Apache-2.0
#include "cli/gpu_price_book.hpp"

#include <fmt/format.h>

#include <set>

namespace gpulens::cli {

std::string currency_code(const std::string& configured) {
  if (configured.empty() || configured == "$") return "USD";
  if (configured == "€") return "EUR";
  if (configured == "£") return "GBP";
  return configured;
}

void GpuPriceBook::set_override(std::optional<double> per_hour, const std::string& currency,
                                const std::string& source) {
  std::lock_guard lock(mutex_);
  if (per_hour) {
    override_ = PriceQuote{*per_hour, currency_code(currency), source};
  } else {
    override_.reset();
  }
}

std::optional<PriceQuote> GpuPriceBook::from_table(const std::string& device_name) const {
  if (!tables_.models || !tables_.prices) return std::nullopt;
  const verdict::GpuModel* model = tables_.models->find(device_name);
  if (model == nullptr) return std::nullopt;
  const auto price = tables_.prices->price(model->model);
  if (!price) return std::nullopt;
  return PriceQuote{*price, currency_code(tables_.prices->currency()),
                    tables_.prices->origin() + ": " + model->model};
}

std::optional<PriceQuote> GpuPriceBook::price_of(const std::string& device_name) const {
  std::lock_guard lock(mutex_);
  if (override_) return override_;
  const auto it = by_name_.find(device_name);
  if (it != by_name_.end()) return it->second;
  auto quote = from_table(device_name);
  by_name_.emplace(device_name, quote);
  return quote;
}

std::string GpuPriceBook::describe(const std::vector<std::string>& device_names) const {
  std::set<std::string> parts;
  std::set<std::string> unpriced;
  for (const auto& name : device_names) {
    if (const auto q = price_of(name)) {
      parts.insert(fmt::format("{:g} {}/GPU-hour ({})", q->per_hour, q->currency, q->source));
    } else {
      unpriced.insert(name.empty() ? "unnamed" : name);
    }
  }
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : "; ") + p;
  if (!unpriced.empty()) {
    std::string names;
    for (const auto& n : unpriced) names += (names.empty() ? "" : ", ") + n;
    out += (out.empty() ? "" : "; ") +
           fmt::format(
               "no price for {} (set price_per_gpu_hour in --config, or a prices.json "
               "in --data-dir)",
               names);
  }
  return out.empty() ? "no GPUs to price" : out;
}

}  // namespace gpulens::cli
