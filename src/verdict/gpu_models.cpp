// SPDX-License-Identifier: Apache-2.0
#include "verdict/gpu_models.hpp"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace gpulens::verdict {
namespace {

Result<std::string> slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{"cannot read " + path};
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Result<nlohmann::json> parse_object(const std::string& text, const std::string& name) {
  auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return Error{name + ": not a JSON object"};
  return j;
}

}  // namespace

std::optional<double> GpuModel::peak_tflops(const std::string& dtype) const {
  const auto it = tflops.find(dtype);
  if (it == tflops.end()) return std::nullopt;
  return it->second;
}

Result<GpuModelTable> GpuModelTable::parse(const std::string& json_text, const std::string& name) {
  auto j = parse_object(json_text, name);
  if (!j) return j.error();
  GpuModelTable table;
  table.origin_ = name;
  if (const auto d = j->find("dtypes"); d != j->end() && d->is_object()) {
    for (const auto& [key, _] : d->items()) table.dtypes_.push_back(key);
  }
  const auto models = j->find("models");
  if (models == j->end() || !models->is_array()) return Error{name + ": no \"models\" array"};
  for (const auto& m : *models) {
    GpuModel model;
    if (!m.is_object() || !m.contains("model") || !m["model"].is_string() || !m.contains("match") ||
        !m["match"].is_string()) {
      return Error{name + ": every model needs string \"model\" and \"match\""};
    }
    model.model = m["model"].get<std::string>();
    model.match = m["match"].get<std::string>();
    try {
      model.pattern = std::regex(model.match, std::regex::ECMAScript | std::regex::icase);
    } catch (const std::regex_error& e) {
      return Error{name + ": model " + model.model + ": bad match pattern: " + e.what()};
    }
    if (const auto c = m.find("peak_clock_mhz"); c != m.end() && c->is_number()) {
      model.peak_clock_mhz = c->get<double>();
    }
    if (const auto f = m.find("tflops"); f != m.end() && f->is_object()) {
      for (const auto& [dtype, v] : f->items()) {
        if (v.is_number()) model.tflops[dtype] = v.get<double>();
      }
    }
    if (const auto s = m.find("source"); s != m.end() && s->is_string()) {
      model.source = s->get<std::string>();
    }
    table.models_.push_back(std::move(model));
  }
  return table;
}

Result<GpuModelTable> GpuModelTable::load(const std::string& path) {
  auto text = slurp(path);
  if (!text) return text.error();
  return parse(*text, path);
}

const GpuModel* GpuModelTable::find(const std::string& device_name) const {
  for (const auto& m : models_) {
    if (std::regex_search(device_name, m.pattern)) return &m;
  }
  return nullptr;
}

Result<PriceTable> PriceTable::parse(const std::string& json_text, const std::string& name) {
  auto j = parse_object(json_text, name);
  if (!j) return j.error();
  PriceTable table;
  table.origin_ = name;
  if (const auto c = j->find("currency"); c != j->end() && c->is_string()) {
    table.currency_ = c->get<std::string>();
  }
  const auto prices = j->find("prices");
  if (prices == j->end() || !prices->is_object()) return Error{name + ": no \"prices\" object"};
  for (const auto& [model, v] : prices->items()) {
    if (!v.is_number() || v.get<double>() < 0) {
      return Error{name + ": price of " + model + " is not a non-negative number"};
    }
    table.prices_[model] = v.get<double>();
  }
  return table;
}

Result<PriceTable> PriceTable::load(const std::string& path) {
  auto text = slurp(path);
  if (!text) return text.error();
  return parse(*text, path);
}

std::optional<double> PriceTable::price(const std::string& model) const {
  const auto it = prices_.find(model);
  if (it == prices_.end()) return std::nullopt;
  return it->second;
}

std::string currency_symbol(const std::string& currency) {
  if (currency == "USD" || currency == "$") return "$";
  if (currency == "EUR") return "€";
  if (currency == "GBP") return "£";
  return currency + " ";
}

}  // namespace gpulens::verdict
