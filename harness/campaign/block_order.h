// The order in which a block runs its allocators (harness/docs/protocol.md#campaigns): drawn from
// splitmix64, balanced so each allocator sits at each position equally often across blocks (±1).
//
// Design ("shuffled-latin-square-v1"): blocks are taken in groups of n (n = allocators).
// Each group draws a fresh base permutation (Fisher–Yates, unbiased bounded draws) and a
// shuffled list of the n cyclic rotations; block k of the group runs rotation r_k of the
// base: position p holds base[(p + r_k) mod n]. A full group is a Latin square, so every
// allocator takes every position exactly once per group; the last, partial group uses
// distinct rotations, so it adds at most one more. Hence counts are floor(B/n) or ceil(B/n).
// The seed is per cell (campaign seed + cell key), so cells do not share one order sequence.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace heapscope::harness {

inline constexpr const char* kBlockOrderMethod = "shuffled-latin-square-v1";

// orders[b][p] = index of the allocator at position p of block b.
std::vector<std::vector<std::size_t>> balanced_block_orders(std::size_t allocators,
                                                            std::size_t blocks, std::uint64_t seed);

// The seed for one cell's orders: mixes the campaign seed with "<workload>/<threads>".
std::uint64_t block_order_seed(std::uint64_t campaign_seed, const std::string& workload,
                               unsigned threads);

}  // namespace heapscope::harness
