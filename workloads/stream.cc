#include "workloads/stream.h"

#include <bit>

#include "base/splitmix64.h"
#include "workloads/fatal.h"

namespace heapscope::workloads {

StreamWriter::StreamWriter(std::size_t capacity, unsigned threads) : capacity_(capacity) {
  s_.storage = MmapRegion::map(capacity * sizeof(Op), MmapRegion::Commit::kLazy);
  HS_WL_CHECK(s_.storage.data() != nullptr || capacity == 0, "cannot mmap the op stream");
  out_ = s_.storage.as<Op>();
  s_.ops = out_;
  s_.sends_to.assign(threads, 0);
}

void StreamWriter::emit(Op op) {
  HS_WL_CHECK(s_.size < capacity_, "op stream capacity exceeded");
  out_[s_.size++] = op;
  if (op.slot() + 1 > s_.slots) s_.slots = op.slot() + 1;
  if (!timed_) return;
  CallCounts& c = s_.timed_calls;
  switch (op.kind()) {
    case OpKind::kMalloc:
      ++c.malloc;
      ++cost_;
      break;
    case OpKind::kFree:
      ++c.free;
      ++cost_;
      break;
    case OpKind::kRealloc:
      ++c.realloc;
      ++cost_;
      break;
    case OpKind::kCalloc:
      ++c.calloc;
      ++cost_;
      break;
    case OpKind::kAligned:
      ++c.aligned;
      ++cost_;
      break;
    case OpKind::kSend:
      ++c.malloc;
      cost_ += 2;
      HS_WL_CHECK(op.target() < s_.sends_to.size(), "send target out of range");
      ++s_.sends_to[op.target()];
      s_.sent_bytes += op.size();
      break;
    case OpKind::kDrain:
    case OpKind::kGenerationEnd:
      break;
  }
}

void StreamWriter::begin_timed() {
  timed_ = true;
  s_.timed_begin = s_.size;
}

void StreamWriter::end_timed() {
  timed_ = false;
  s_.timed_end = s_.size;
}

Stream StreamWriter::finish() {
  if (timed_) end_timed();
  return std::move(s_);
}

std::uint64_t stream_digest(const Stream& s) {
  using base::kGolden;
  constexpr std::uint64_t kM1 = 0xbf58476d1ce4e5b9ULL;
  std::uint64_t lane[4] = {kGolden, kGolden * 3, kGolden * 5, kGolden * 7};
  std::size_t i = 0;
  for (; i + 4 <= s.size; i += 4) {
    for (int l = 0; l < 4; ++l)
      lane[l] = std::rotl(lane[l] + s.ops[i + l].word * kM1, 31) * kGolden;
  }
  for (; i < s.size; ++i) lane[i % 4] = std::rotl(lane[i % 4] + s.ops[i].word * kM1, 31) * kGolden;
  std::uint64_t h = base::splitmix64_mix(s.size ^ kGolden);
  h = base::splitmix64_mix(h ^ s.timed_begin);
  h = base::splitmix64_mix(h ^ s.timed_end);
  for (const std::uint64_t l : lane) h = base::splitmix64_mix(h ^ l);
  return h;
}

}  // namespace heapscope::workloads
