// Peak of the bytes a workload has requested and not yet freed, read from its materialized
// streams (untimed, allocator-independent): the denominator of the fragmentation proxy
// (allocator RSS / live requested bytes, harness/docs/protocol.md#memory).
//
// Per worker the stream is replayed on paper: malloc/calloc/posix_memalign add their size,
// free subtracts the slot's size, realloc adds the difference. A handed-off block (kSend)
// leaves the sender at once, so blocks in flight between workers are not counted. The cell's
// value is the SUM of the workers' peaks: exact for one worker, an upper bound of the true
// simultaneous peak for several (their peaks need not coincide).
#pragma once

#include <cstdint>
#include <vector>

#include "workloads/stream.h"

namespace heapscope::workloads {

std::uint64_t peak_live_bytes(const Stream& stream);
std::uint64_t peak_live_bytes(const std::vector<Stream>& streams);

}  // namespace heapscope::workloads
