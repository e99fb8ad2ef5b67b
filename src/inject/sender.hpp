// SPDX-License-Identifier: Apache-2.0
#pragma once
// Where the injection library's records go: this process's record file,
// $GPULENS_KERNELS_DIR/kernels-<pid>.jsonl (kernels/record/chunk_record.hpp, version 4),
// and with $GPULENS_KERNELS_AGENT each chunk's summary to the node agent
// (agent_link.hpp). A process line first, a names line before each chunk that
// brings new names, a chunk line per window (traced whole: every kChunkSeconds),
// an end line at exit. Each line goes out in one write, so a reader never sees
// half a line unless the process dies inside the write.
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "inject/agent_link.hpp"

namespace gpulens::inject {

struct Injection;

struct Sender {
  // Set at cuInit, before any thread writes; read-only after.
  std::string out_dir;  // empty: summaries to the agent only
  // Each chunk's summary to the node agent, sent under `writing`; null when not
  // asked for, or asked for wrongly (the note says why).
  std::unique_ptr<AgentLink> agent;
  std::string agent_note;

  // `writing` orders the window or chunk thread's lines against the exit
  // handler's. The members below are read and written under it.
  std::mutex writing;
  int record_fd = -1;
  bool process_written = false;
  bool written = false;      // the end is out (or a forked child): nothing more
  std::uint64_t chunks = 0;  // chunk lines written (their `seq`)
};

// Drains what CUPTI delivered since the last chunk and sends it as one chunk over
// [start, end] (CUPTI timestamps); `window`: a trace window.
void write_chunk(Injection& in, std::uint64_t start, std::uint64_t end, bool window);

// The end line, once, at exit; the record file is closed after it.
void write_end(Injection& in);

}  // namespace gpulens::inject
