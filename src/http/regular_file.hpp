// SPDX-License-Identifier: Apache-2.0
#pragma once
// Reading the files a web config names (the config itself, certificates, keys,
// CA bundles). Each is opened non-blocking and must be a regular file: a FIFO
// named as cert_file hung start-up in open(2) waiting for a writer, and a
// device (/dev/zero) would be read forever.
#include <cstddef>
#include <string>
#include <string_view>

#include "core/result.hpp"

namespace gpulens::http {

// Larger than any certificate chain or CA bundle in use (Debian's whole
// ca-certificates.crt is about 200 KiB).
inline constexpr std::size_t kMaxConfigFileBytes = 16u << 20;

// The contents of `path`, or an error naming `what` ("the TLS certificate")
// and the path when it cannot be opened, is not a regular file, or is larger
// than kMaxConfigFileBytes.
Result<std::string> read_regular_file(const std::string& path, std::string_view what);

}  // namespace gpulens::http
