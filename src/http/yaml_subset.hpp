// SPDX-License-Identifier: Apache-2.0
#pragma once
// A reader for the small YAML subset that configuration files like the
// exporter-toolkit web config use: block mappings nested by indentation,
// plain/'single'/"double" quoted scalars, comments, and `{}` / `~` / null for
// an empty value. Sequences, anchors, multi-line scalars and flow collections
// are refused with the line number rather than misread.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"

namespace gpulens::http {

// Levels of nested mappings (web configs use 3); deeper is refused before the
// reader recurses further.
inline constexpr int kMaxYamlDepth = 16;

struct YamlNode {
  // Declared here and defaulted in the .cpp: `entries` holds YamlNodes, and
  // clang (the fuzz build) needs the type complete before these are made.
  YamlNode();
  ~YamlNode();
  YamlNode(const YamlNode&);
  YamlNode(YamlNode&&) noexcept;
  YamlNode& operator=(const YamlNode&);
  YamlNode& operator=(YamlNode&&) noexcept;

  int line = 0;
  bool is_map = false;
  bool is_null = false;
  std::string scalar;
  std::vector<std::pair<std::string, YamlNode>> entries;  // in file order

  const YamlNode* find(std::string_view key) const;
};

Result<YamlNode> parse_yaml_subset(std::string_view text, const std::string& name);

}  // namespace gpulens::http
