// Generators of the built-in workloads (the table in registry.cc says what each does).
#pragma once

#include "workloads/workload.h"

namespace heapscope::workloads::gen {

// gen_local.cc
void tiny_hot(GenContext&);
void general_mix(GenContext&);
void large_buffers(GenContext&);
void aligned(GenContext&);
void calloc_zero(GenContext&);
// gen_lifetime.cc
void long_lived(GenContext&);
void sawtooth(GenContext&);
// gen_threads.cc
void handoff(GenContext&);
void producer_consumer(GenContext&);
void thread_churn(GenContext&);

// Shared parameters, also quoted by the registry's documentation strings.
inline constexpr std::uint32_t kLongLivedObjects = 1u << 18;  // whole cell, split by worker
inline constexpr std::uint32_t kLongLivedTemps = 16;
inline constexpr std::uint32_t kSawtoothBatch = 1024;
inline constexpr std::uint32_t kSawtoothRetainCap = 16384;
inline constexpr unsigned kChurnGenerations = 8;

}  // namespace heapscope::workloads::gen
