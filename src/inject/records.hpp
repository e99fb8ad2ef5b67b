// SPDX-License-Identifier: Apache-2.0
#pragma once
// What CUPTI delivered to the injection library's buffers, kept by the ChunkBuilder
// until the next chunk drains it: the hand-over between the CUPTI seam
// (cupti_seam.hpp, whose buffer callbacks fill it on CUPTI's thread) and the
// sender (sender.hpp, which drains it on the window thread or at exit). It owns
// the record's clock: every time in the record is relative to CUPTI's clock at
// the first attach.
#include <cupti.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>

#include "inject/chunk_builder.hpp"
#include "inject/cupti_seam.hpp"
#include "inject/demangled_names.hpp"

namespace gpulens::inject {

struct RecordClock {
  std::uint64_t base_ns = 0;      // CUPTI's clock at the first attach ...
  std::int64_t base_unix_ns = 0;  // ... and CLOCK_REALTIME at the same moment
};

class Records {
 public:
  // At cuInit: the wall clock, for a record whose CUPTI never attached.
  void set_unix_base(std::int64_t unix_ns);
  // At the first attach: the clock, and the chunk builder from then on.
  void start(std::uint64_t base_ns, std::int64_t base_unix_ns);
  bool started() const;
  RecordClock clock() const;

  // CUPTI's buffer callback: every record of `buffer` into the chunk builder.
  void take(const Api& api, CUcontext ctx, std::uint32_t stream, std::uint8_t* buffer,
            std::size_t valid);
  // Everything since the last drain; nullopt before the first attach.
  std::optional<Drained> drain();
  // The first and last GPU activity seen, relative; nullopt when none was.
  std::optional<std::pair<std::int64_t, std::int64_t>> activity() const;
  std::uint64_t unmatched_ranges() const;

 private:
  void take_one(const CUpti_Activity* rec);  // with `mutex_` held
  void seen(std::uint64_t start, std::uint64_t end);

  // Taken by CUPTI's buffer thread for every buffer; by the sender to drain.
  mutable std::mutex mutex_;
  RecordClock clock_;
  std::unique_ptr<ChunkBuilder> builder_;  // made at CUPTI's first attach
  DemangledNames names_;
  std::uint64_t first_ns_ = UINT64_MAX;  // first and last GPU activity seen
  std::uint64_t last_ns_ = 0;
};

// CUPTI's buffer callbacks, registered by the CUPTI seam's attach: they fill the
// process's Records (injection.hpp).
void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records);
void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t* buffer, size_t size,
                               size_t valid);

}  // namespace gpulens::inject
