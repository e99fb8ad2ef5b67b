// SPDX-License-Identifier: Apache-2.0
#include "http/yaml_subset.hpp"

#include <fmt/format.h>

#include <unordered_set>

namespace gpulens::http {
namespace {

struct Line {
  int number = 0;
  int indent = 0;
  std::string key;
  std::string value;  // raw text after the colon, comment removed, trimmed
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

// Cuts a comment: '#' at the start or after a blank, outside quotes.
std::string_view strip_comment(std::string_view s) {
  char quote = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (quote != 0) {
      if (c == '\\' && quote == '"') {
        ++i;
      } else if (c == quote) {
        quote = 0;
      }
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '#' && (i == 0 || s[i - 1] == ' ' || s[i - 1] == '\t')) {
      return s.substr(0, i);
    }
  }
  return s;
}

Result<std::string> unquote(std::string_view v, const std::string& where) {
  if (v.size() >= 2 && v.front() == '\'' && v.back() == '\'') {
    std::string out;
    for (std::size_t i = 1; i + 1 < v.size(); ++i) {
      out += v[i];
      if (v[i] == '\'' && i + 2 < v.size() && v[i + 1] == '\'') ++i;  // '' is one quote
    }
    return out;
  }
  if (v.size() >= 2 && v.front() == '"' && v.back() == '"') {
    std::string out;
    const std::size_t last = v.size() - 1;  // the closing quote
    for (std::size_t i = 1; i < last; ++i) {
      if (v[i] != '\\') {
        out += v[i];
        continue;
      }
      if (i + 1 >= last) return Error{fmt::format("{}: a backslash ends the string", where)};
      switch (v[++i]) {
        case 'n':
          out += '\n';
          break;
        case 't':
          out += '\t';
          break;
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case '/':
          out += '/';
          break;
        default:
          return Error{fmt::format("{}: unsupported escape \\{} in a quoted string", where, v[i])};
      }
    }
    return out;
  }
  if (!v.empty() && (v.front() == '"' || v.front() == '\'')) {
    return Error{fmt::format("{}: unterminated quoted string", where)};
  }
  if (!v.empty() && (v.front() == '[' || v.front() == '&' || v.front() == '*' || v.front() == '|' ||
                     v.front() == '>' || v.front() == '!')) {
    return Error{
        fmt::format("{}: '{}' (lists, anchors, tags and block scalars) is not supported "
                    "in this file; write a plain or quoted value",
                    where, v.front())};
  }
  return std::string(v);
}

Result<YamlNode> parse_block(const std::vector<Line>& lines, std::size_t& i, int indent,
                             const std::string& name, int depth) {
  if (depth > kMaxYamlDepth) {
    return Error{fmt::format("{}:{}: nested deeper than {} levels", name,
                             i < lines.size() ? lines[i].number : 0, kMaxYamlDepth)};
  }
  YamlNode node;
  std::unordered_set<std::string> seen;
  node.is_map = true;
  node.line = i < lines.size() ? lines[i].number : 0;
  while (i < lines.size() && lines[i].indent >= indent) {
    const Line& l = lines[i];
    const std::string where = fmt::format("{}:{}", name, l.number);
    if (l.indent != indent) {
      return Error{fmt::format("{}: unexpected indentation", where)};
    }
    if (!seen.insert(l.key).second) {
      return Error{fmt::format("{}: '{}' is given twice", where, l.key)};
    }
    ++i;
    YamlNode child;
    child.line = l.number;
    if (l.value.empty()) {
      if (i < lines.size() && lines[i].indent > indent) {
        auto sub = parse_block(lines, i, lines[i].indent, name, depth + 1);
        if (!sub) return sub.error();
        child = std::move(*sub);
        child.line = l.number;
      } else {
        child.is_null = true;
      }
    } else if (l.value == "{}" || l.value == "~" || l.value == "null") {
      child.is_null = l.value != "{}";
      child.is_map = l.value == "{}";
    } else {
      auto s = unquote(l.value, where);
      if (!s) return s.error();
      child.scalar = std::move(*s);
    }
    node.entries.emplace_back(l.key, std::move(child));
  }
  return node;
}

}  // namespace

YamlNode::YamlNode() = default;
YamlNode::~YamlNode() = default;
YamlNode::YamlNode(const YamlNode&) = default;
YamlNode::YamlNode(YamlNode&&) noexcept = default;
YamlNode& YamlNode::operator=(const YamlNode&) = default;
YamlNode& YamlNode::operator=(YamlNode&&) noexcept = default;

const YamlNode* YamlNode::find(std::string_view key) const {
  for (const auto& [k, v] : entries) {
    if (k == key) return &v;
  }
  return nullptr;
}

Result<YamlNode> parse_yaml_subset(std::string_view text, const std::string& name) {
  std::vector<Line> lines;
  int number = 0;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const auto end = text.find('\n', pos);
    std::string_view raw = text.substr(pos, end == std::string_view::npos ? text.npos : end - pos);
    pos = end == std::string_view::npos ? text.size() + 1 : end + 1;
    ++number;
    const std::string where = fmt::format("{}:{}", name, number);
    std::string_view content = strip_comment(raw);
    if (trim(content).empty() || trim(content) == "---") continue;
    int indent = 0;
    while (static_cast<std::size_t>(indent) < content.size() && content[indent] == ' ') ++indent;
    if (static_cast<std::size_t>(indent) < content.size() && content[indent] == '\t')
      return Error{fmt::format("{}: tabs are not allowed for indentation in YAML", where)};
    content = trim(content);
    if (content.front() == '-')
      return Error{fmt::format("{}: lists are not supported in this file", where)};
    // The key ends at the first ": " (or a colon at the end of the line).
    std::size_t colon = std::string_view::npos;
    for (std::size_t i = 0; i < content.size(); ++i) {
      if (content[i] == ':' && (i + 1 == content.size() || content[i + 1] == ' ')) {
        colon = i;
        break;
      }
    }
    if (colon == std::string_view::npos || colon == 0)
      return Error{fmt::format("{}: expected 'key: value'", where)};
    auto key = unquote(trim(content.substr(0, colon)), where);
    if (!key) return key.error();
    lines.push_back(
        Line{number, indent, std::move(*key), std::string(trim(content.substr(colon + 1)))});
  }
  std::size_t i = 0;
  if (lines.empty()) {
    YamlNode empty;
    empty.is_map = true;
    return empty;
  }
  if (lines.front().indent != 0)
    return Error{
        fmt::format("{}:{}: the first key must not be indented", name, lines.front().number)};
  auto root = parse_block(lines, i, 0, name, 1);
  if (!root) return root.error();
  if (i != lines.size())
    return Error{fmt::format("{}:{}: unexpected indentation", name, lines[i].number)};
  return root;
}

}  // namespace gpulens::http
