// Hand-built ProfileData for the writer tests, plus helpers to read what the writers produce.
#pragma once

#include <unistd.h>
#include <zlib.h>

#include <cmath>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "profiler/os_buffer.h"
#include "profiler/profile_data.h"

namespace hs_test {

namespace prof = heapscope::prof;

// Stacks of same-sized objects, with the estimates the sampler would attach (each sample of
// size s weighs 1 / (1 - exp(-s / interval))).
class FakeProfile {
 public:
  explicit FakeProfile(uint64_t interval = 524288, bool accum = false) {
    data_.sample_interval = interval;
    data_.accum = accum;
    data_.time_nanos = 1700000000123456789LL;
  }

  // `live` live samples and `accum` samples in total, all of `size` bytes.
  FakeProfile& add(std::vector<uintptr_t> pcs, uint64_t live, uint64_t size, uint64_t accum = 0) {
    pcs_.push_back(std::move(pcs));
    double weight = sample_weight(size);
    prof::ProfileStack stack{};
    stack.pcs = pcs_.back().data();
    stack.depth = static_cast<uint32_t>(pcs_.back().size());
    stack.live_objects = live;
    stack.live_bytes = live * size;
    stack.accum_objects = accum;
    stack.accum_bytes = accum * size;
    stack.live_objects_estimate = static_cast<double>(live) * weight;
    stack.live_bytes_estimate = static_cast<double>(live * size) * weight;
    stack.accum_objects_estimate = static_cast<double>(accum) * weight;
    stack.accum_bytes_estimate = static_cast<double>(accum * size) * weight;
    stacks_.push_back(stack);
    return *this;
  }

  double sample_weight(uint64_t size) const {
    if (data_.sample_interval <= 1) return 1.0;
    return 1.0 / (1.0 - std::exp(-static_cast<double>(size) /
                                 static_cast<double>(data_.sample_interval)));
  }

  prof::ProfileData& data() {
    data_.stacks = stacks_.data();
    data_.stack_count = stacks_.size();
    return data_;
  }
  const std::vector<prof::ProfileStack>& stacks() const { return stacks_; }

 private:
  std::deque<std::vector<uintptr_t>> pcs_;  // stable addresses for ProfileStack::pcs
  std::vector<prof::ProfileStack> stacks_;
  prof::ProfileData data_{};
};

inline std::string to_string(const prof::OsBuffer& buffer) {
  return {reinterpret_cast<const char*>(buffer.data()), buffer.size()};
}

inline std::string self_exe_path() {
  char path[4096];
  ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  return n > 0 ? std::string(path, static_cast<size_t>(n)) : std::string();
}

// A strict line-shape matcher (std::regex trips GCC 12's -Wmaybe-uninitialized under ASan).
// In `shape`: 'N' = one or more decimal digits, 'H' = one or more lowercase hex digits,
// 'S' = zero or more spaces, '*' = the rest of the line (non-empty); anything else is literal.
// Each N, H and * appends what it matched to `captures`.
inline bool match_shape(std::string_view text, std::string_view shape,
                        std::vector<std::string>* captures = nullptr) {
  auto run = [&](auto accept) {
    size_t n = 0;
    while (n < text.size() && accept(text[n])) ++n;
    return n;
  };
  for (char c : shape) {
    size_t n = 0;
    if (c == 'N') {
      n = run([](char x) { return x >= '0' && x <= '9'; });
      if (n == 0) return false;
    } else if (c == 'H') {
      n = run([](char x) { return (x >= '0' && x <= '9') || (x >= 'a' && x <= 'f'); });
      if (n == 0) return false;
    } else if (c == 'S') {
      text.remove_prefix(run([](char x) { return x == ' '; }));
      continue;
    } else if (c == '*') {
      n = text.size();
      if (n == 0) return false;
    } else {
      if (text.empty() || text[0] != c) return false;
      text.remove_prefix(1);
      continue;
    }
    if (captures != nullptr) captures->emplace_back(text.substr(0, n));
    text.remove_prefix(n);
  }
  return text.empty();
}

// gzip -d; empty on error.
inline std::string gunzip(const std::string& compressed) {
  z_stream stream{};
  if (inflateInit2(&stream, 15 + 16) != Z_OK) return {};
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(compressed.data()));
  stream.avail_in = static_cast<uInt>(compressed.size());
  std::string out;
  char chunk[65536];
  int rc = Z_OK;
  while (rc == Z_OK) {
    stream.next_out = reinterpret_cast<Bytef*>(chunk);
    stream.avail_out = sizeof chunk;
    rc = inflate(&stream, Z_NO_FLUSH);
    out.append(chunk, sizeof chunk - stream.avail_out);
  }
  inflateEnd(&stream);
  return rc == Z_STREAM_END ? out : std::string();
}

}  // namespace hs_test
