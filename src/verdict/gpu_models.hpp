// SPDX-License-Identifier: Apache-2.0
#pragma once
// The two documented data files the report reads: dense peak TFLOP/s per GPU
// model and data type (data/gpu_peaks.json, the MFU denominator) and the price
// of a GPU-hour per model (data/prices.json). Parsing is pure; load() reads a
// file. Which file, or the built-in copy, is data_files.hpp's business.
#include <map>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "core/result.hpp"

namespace gpulens::verdict {

struct GpuModel {
  std::string model;  // "H100 SXM"
  std::string match;  // regular expression searched in the NVML device name
  std::optional<double> peak_clock_mhz;
  std::map<std::string, double> tflops;  // dtype -> dense TFLOP/s
  std::string source;                    // which datasheet the figures come from
  std::regex pattern;

  std::optional<double> peak_tflops(const std::string& dtype) const;
};

class GpuModelTable {
 public:
  static Result<GpuModelTable> parse(const std::string& json_text, const std::string& name);
  static Result<GpuModelTable> load(const std::string& path);

  // The first model whose pattern matches the device name; nullptr when none does.
  const GpuModel* find(const std::string& device_name) const;
  const std::vector<GpuModel>& models() const { return models_; }
  const std::vector<std::string>& dtypes() const { return dtypes_; }
  const std::string& origin() const { return origin_; }

 private:
  std::vector<GpuModel> models_;
  std::vector<std::string> dtypes_;
  std::string origin_;
};

class PriceTable {
 public:
  static Result<PriceTable> parse(const std::string& json_text, const std::string& name);
  static Result<PriceTable> load(const std::string& path);

  std::optional<double> price(const std::string& model) const;
  const std::string& currency() const { return currency_; }
  const std::string& origin() const { return origin_; }

 private:
  std::map<std::string, double> prices_;
  std::string currency_ = "USD";
  std::string origin_;
};

// "$" for USD, else the code followed by a space ("EUR ").
std::string currency_symbol(const std::string& currency);

}  // namespace gpulens::verdict
