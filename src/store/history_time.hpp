#pragma once
// Where the agent keeps its history, and the times people type to read it back.
#include <string>
#include <string_view>

#include "core/result.hpp"

namespace gpulens::store {

// Where `gpulens serve` keeps its history unless told otherwise:
// $STATE_DIRECTORY (systemd), /var/lib/gpulens for root, else the XDG state dir.
std::string default_history_path();

// A point in time typed by a person: RFC 3339 / ISO 8601 ("2026-11-21T10:00:00Z",
// "2026-11-21T11:00:00+01:00", "2026-11-21 10:00"; no offset means local time,
// a date alone its local midnight), Unix seconds ("1795289145.5"), "now", or a
// time before now ("-2h", "-30m", "now-1h30m"; units s, m, h, d, w).
Result<double> parse_history_time(std::string_view text, double now);

// "2026-11-21T10:00:00Z" (whole seconds, UTC).
std::string format_history_time(double t);

}  // namespace gpulens::store
