// SPDX-License-Identifier: Apache-2.0
#include "sources/dcgm/dcgm_fields.hpp"

#include <cmath>

namespace gpulens::sources::dcgm {

const FieldMapping* find_mapping(unsigned short field) {
  for (const auto& m : kFieldMappings) {
    if (m.field == field) return &m;
  }
  return nullptr;
}

std::optional<double> convert_value(const FieldMapping& mapping, const FieldValue_v2& value) {
  if (value.status != code(Return::Ok)) return std::nullopt;
  double raw = 0;
  // The ratios are doubles and the byte rates int64 (dcgmlib/src/dcgm_fields.cpp
  // registers them so); reading either type keeps a future change of type harmless.
  if (value.fieldType == kFieldTypeDouble) {
    if (!std::isfinite(value.value.dbl) || value.value.dbl >= kFp64Blank) return std::nullopt;
    raw = value.value.dbl;
  } else if (value.fieldType == kFieldTypeInt64) {
    if (value.value.i64 >= kInt64Blank) return std::nullopt;
    raw = static_cast<double>(value.value.i64);
  } else {
    return std::nullopt;
  }
  if (raw < 0) return std::nullopt;
  switch (mapping.conversion) {
    case Conversion::RatioToPercent:
      return raw * 100.0;
    case Conversion::BytesPerSecToMibs:
      return raw / (1024.0 * 1024.0);
  }
  return std::nullopt;
}

}  // namespace gpulens::sources::dcgm
