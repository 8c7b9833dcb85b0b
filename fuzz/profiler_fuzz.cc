// Fuzz target: the sampled heap profiler under random traffic. The input drives hs_* traffic
// (malloc, calloc, aligned, realloc, free of varied sizes; batches on a helper thread, joined,
// and traffic running concurrently with dumps) interleaved with profiler start (small random
// intervals so samples happen, random seed, stack depth, accumulation and memory budget), stop,
// reset, visits, snapshots and dumps in every format (text, proto, proto-symbolized; through a
// writer into memory and into a temp file; the peak profile). Every dump is read back:
//   text:  the header parses, the per-stack lines add up to it, its interval is the session's;
//   proto: gunzips, decodes, has the four sample types, every sample's location ids resolve,
//          every location's mapping and function ids resolve;
// and with no traffic in between, the text totals equal a visit's, which equal the stats and a
// snapshot's, and never count more samples than blocks allocated in the session are live.
// ASan (the fuzz preset) watches the profiler's own memory and leaks at exit.
#include <heapscope/heapscope.h>
#include <heapscope/profile.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include "fuzz_input.h"
#include "profile_readback.h"

namespace {

using heapscope::fuzz::FuzzInput;

constexpr size_t kSlots = 64;
constexpr uint64_t kNoSession = 0;

struct Block {
  void* p = nullptr;
  size_t size = 0;
  uint64_t session = kNoSession;  // the profiler session it was (re)allocated in, if any
};

struct Model {
  Block blocks[kSlots];
  bool running = false;
  uint64_t session = kNoSession;  // counts starts; kNoSession before the first
  uint64_t interval = 0;
  bool accum = false;
  uint32_t max_depth = HS_PROF_DEFAULT_STACK_DEPTH;

  // Live blocks allocated in the running session: the most samples the profiler may hold.
  uint64_t session_blocks() const {
    uint64_t n = 0;
    for (const Block& b : blocks) n += b.p != nullptr && running && b.session == session;
    return n;
  }
};

// Aborts with a reason: libFuzzer records the input, the message says which check failed.
[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "profiler_fuzz: %s\n", what);
  std::abort();
}

size_t draw_size(FuzzInput& in) {
  switch (in.take(1) % 4) {
    case 0:
      return in.take(1);  // tiny, including 0
    case 1:
      return in.take(2) % 4096;
    case 2:
      return in.take(3) % (256u << 10);
    default:
      return in.take(3) % (2u << 20);
  }
}

// One alloc / free / realloc on a slot. The session stamp is read, never changed, so a helper
// thread may run this while the main thread waits for it.
void traffic(FuzzInput& in, Model& m) {
  const uint64_t op = in.take(1);
  Block& b = m.blocks[in.take(1) % kSlots];
  const uint64_t stamp = m.running ? m.session : kNoSession;
  if (b.p == nullptr) {
    const size_t n = draw_size(in);
    switch (op % 4) {
      case 0:
        b.p = hs_calloc(1, n);
        break;
      case 1:
        b.p = hs_malloc_aligned(n, size_t{1} << (in.take(1) % 13));
        break;
      case 2:
        b.p = hs_realloc(nullptr, n);
        break;
      default:
        b.p = hs_malloc(n);
    }
    if (b.p != nullptr) b = Block{b.p, n, stamp};
    return;
  }
  if (op % 3 == 0) {
    const size_t n = draw_size(in);
    void* q = hs_realloc(b.p, n);
    if (n == 0) {
      b = Block{};
    } else if (q != nullptr) {
      b = Block{q, n, stamp};
    }
    return;
  }
  hs_free(b.p);
  b = Block{};
}

// ---- reading the live set -------------------------------------------------------------------

struct Totals {
  uint64_t stacks = 0, live_objects = 0, live_bytes = 0, accum_objects = 0, accum_bytes = 0;
  bool operator==(const Totals&) const = default;
};

struct VisitState {
  Totals totals;
  uint32_t max_depth = HS_PROF_MAX_STACK_DEPTH;
  bool nested_checks = false;  // also try the calls that must fail inside a visitor
};

bool add_stack(const hs_prof_sample_info_t* info, void* arg) {
  auto* state = static_cast<VisitState*>(arg);
  if (info->stack == nullptr || info->depth == 0 || info->depth > state->max_depth) {
    fail("a visited stack is empty or deeper than the session's stack depth");
  }
  state->totals.stacks++;
  state->totals.live_objects += info->live_objects;
  state->totals.live_bytes += info->live_bytes;
  state->totals.accum_objects += info->accum_objects;
  state->totals.accum_bytes += info->accum_bytes;
  if (state->nested_checks) {
    state->nested_checks = false;  // once per visit is enough
    if (hs_prof_visit(add_stack, arg)) fail("hs_prof_visit succeeded inside a visitor");
    if (hs_prof_start(1)) fail("hs_prof_start succeeded inside a visitor");
    if (hs_prof_snapshot_t* s = hs_prof_snapshot_new(); s != nullptr) {
      hs_prof_snapshot_free(s);
      fail("hs_prof_snapshot_new succeeded inside a visitor");
    }
    // The visitor's own allocations are never sampled (the totals after must not move).
    hs_free(hs_malloc(info->depth * 1000));
  }
  return true;
}

Totals visit_live(const Model& m, bool nested_checks) {
  VisitState state;
  state.max_depth = m.max_depth;
  state.nested_checks = nested_checks;
  if (!hs_prof_visit(add_stack, &state)) fail("hs_prof_visit failed outside a visitor");
  return state.totals;
}

hs_prof_stats_t stats_now() {
  hs_prof_stats_t stats = HS_PROF_STATS_INIT;
  if (!hs_prof_stats_get(&stats)) fail("hs_prof_stats_get failed");
  return stats;
}

// The visit, the stats and the model agree (no traffic runs concurrently).
Totals check_live_set(const Model& m, bool nested_checks) {
  const Totals totals = visit_live(m, nested_checks);
  if (nested_checks && !(visit_live(m, false) == totals)) {
    fail("allocating inside a visitor changed the sampled set");
  }
  const hs_prof_stats_t stats = stats_now();
  if (stats.live_samples != totals.live_objects || stats.live_bytes != totals.live_bytes) {
    fail("visit totals differ from hs_prof_stats_get");
  }
  if (totals.live_objects > m.session_blocks()) {
    fail("more live samples than blocks allocated in the session are live");
  }
  if (!m.running && totals.live_objects != 0) fail("live samples after hs_prof_stop");
  if (m.running && !m.accum && (totals.accum_objects != 0 || stats.accum_samples != 0)) {
    fail("cumulative counts without accumulation");
  }
  if (m.running && static_cast<bool>(stats.enabled) != hs_prof_is_enabled()) {
    fail("stats.enabled differs from hs_prof_is_enabled");
  }
  return totals;
}

void check_snapshot(const Model& m) {
  const Totals live = check_live_set(m, false);
  hs_prof_snapshot_t* snapshot = hs_prof_snapshot_new();
  if (snapshot == nullptr) return;  // allowed: out of (budgeted) profiler memory
  VisitState state;
  state.max_depth = m.max_depth;
  if (!hs_prof_snapshot_visit(snapshot, add_stack, &state)) fail("snapshot visit failed");
  hs_prof_snapshot_free(snapshot);
  if (!(state.totals == live)) fail("a snapshot differs from the live visit taken just before");
}

// ---- dumps ----------------------------------------------------------------------------------

void check_text(const std::string& text, const Model& m, const Totals* expected) {
#ifdef HEAPSCOPE_FUZZ_PLANT_UAF
  // The fuzz gate's positive control (ci/fuzz-gate.sh): a read of freed memory ASan must report.
  char* header_copy = new char[text.size() + 1];
  text.copy(header_copy, text.size());
  delete[] header_copy;
  if (*static_cast<volatile char*>(header_copy) == '\x7f') std::fputs("?", stderr);
#endif
  heapscope::fuzz::TextProfile profile;
  std::string why;
  if (!heapscope::fuzz::parse_text_profile(text, &profile, &why)) {
    std::fprintf(stderr, "profiler_fuzz: text profile: %s\n%.2000s\n", why.c_str(), text.c_str());
    fail("a text dump does not parse");
  }
  const auto& h = profile.header;
  const auto& sum = profile.line_sum;
  if (h.live_objects != sum.live_objects || h.live_bytes != sum.live_bytes ||
      h.accum_objects != sum.accum_objects || h.accum_bytes != sum.accum_bytes) {
    fail("a text dump's stack lines do not add up to its header");
  }
  // No expectation: the peak profile, which may still be an earlier session's.
  if (expected == nullptr) return;
  if (m.session != kNoSession && profile.interval != m.interval) {
    fail("a text dump's heap_v2 interval is not the session's");
  }
  if (h.live_objects != expected->live_objects || h.live_bytes != expected->live_bytes) {
    fail("a text dump's live totals differ from a visit");
  }
  if (m.accum && m.running &&
      (h.accum_objects != expected->accum_objects || h.accum_bytes != expected->accum_bytes)) {
    fail("a text dump's cumulative totals differ from a visit");
  }
  if (profile.stack_lines > expected->stacks) fail("a text dump has more stacks than a visit");
}

void check_proto(const std::string& gzipped, bool symbolized, const Totals* expected) {
  const std::string bytes = heapscope::fuzz::gunzip(gzipped);
  if (bytes.empty()) fail("a proto dump is not gzip");
  heapscope::fuzz::ProtoProfile p;
  if (!heapscope::fuzz::decode_proto_profile(bytes, &p)) fail("a proto dump does not decode");
  if (p.strings.empty() || !p.strings[0].empty()) fail("string_table[0] is not \"\"");
  auto string_ok = [&p](uint64_t index) { return index < p.strings.size(); };
  static const char* const kTypes[] = {"alloc_objects", "alloc_space", "inuse_objects",
                                       "inuse_space"};
  if (p.sample_types.size() != std::size(kTypes)) fail("a proto dump lacks its 4 sample types");
  for (size_t i = 0; i < p.sample_types.size(); ++i) {
    const auto [type, unit] = p.sample_types[i];
    if (!string_ok(type) || !string_ok(unit) || p.strings[type] != kTypes[i]) {
      fail("a proto sample type is not the expected one");
    }
  }
  auto has_id = [](const auto& items, uint64_t id, auto id_of) {
    for (const auto& item : items) {
      if (id_of(item) == id) return true;
    }
    return false;
  };
  for (const auto& s : p.samples) {
    if (s.values.size() != p.sample_types.size()) fail("a proto sample's value count is wrong");
    if (s.location_ids.empty()) fail("a proto sample has no location");
    for (uint64_t id : s.location_ids) {
      if (!has_id(p.locations, id, [](const auto& l) { return l.id; })) {
        fail("a proto sample's location id does not resolve");
      }
    }
  }
  for (const auto& l : p.locations) {
    if (l.id == 0) fail("a proto location has id 0");
    if (l.mapping_id != 0 && !has_id(p.mapping_ids, l.mapping_id, [](uint64_t id) { return id; })) {
      fail("a proto location's mapping id does not resolve");
    }
    for (uint64_t id : l.function_ids) {
      if (!has_id(p.functions, id, [](const auto& f) { return f.id; })) {
        fail("a proto location's function id does not resolve");
      }
    }
    if (!symbolized && !l.function_ids.empty()) fail("an unsymbolized proto names functions");
  }
  for (const auto& f : p.functions) {
    if (f.id == 0 || !string_ok(f.name)) fail("a proto function is malformed");
  }
  if (expected == nullptr) return;
  if (p.samples.size() > expected->stacks) fail("a proto dump has more samples than a visit");
  if (expected->live_objects > 0 && p.samples.empty()) fail("a proto dump lost the live samples");
}

void check_dump(const std::string& bytes, int format, const Model& m, const Totals* expected) {
  if (format == HS_PROF_FORMAT_TEXT) {
    check_text(bytes, m, expected);
  } else {
    check_proto(bytes, format == HS_PROF_FORMAT_PROTO_SYMBOLIZED, expected);
  }
}

struct Sink {
  std::string bytes;
  size_t refuse_after = SIZE_MAX;  // the writer fails once this many bytes came (error paths)
};

bool append_to_sink(void* arg, const void* data, size_t len) {
  auto* sink = static_cast<Sink*>(arg);
  if (sink->bytes.size() + len > sink->refuse_after) return false;
  sink->bytes.append(static_cast<const char*>(data), len);
  return true;
}

const std::string& temp_path() {
  static const std::string path = [] {
    const char* dir = std::getenv("TMPDIR");
    return std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp") +
           "/heapscope_profiler_fuzz." + std::to_string(getpid()) + ".prof";
  }();
  return path;
}

std::string read_temp_file() {
  std::ifstream in(temp_path(), std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void dump_to_memory(FuzzInput& in, const Model& m) {
  const int format = static_cast<int>(in.take(1) % 3);
  const bool refuse = in.take(1) % 8 == 0;
  const Totals expected = check_live_set(m, false);
  Sink sink;
  if (refuse) sink.refuse_after = in.take(2);
  const bool ok = hs_prof_dump_format_writer(format, append_to_sink, &sink);
  if (refuse) return;  // a failing writer: only no crash and no leak
  if (!ok) return;     // allowed: the budget or the OS refused memory for the profile
  check_dump(sink.bytes, format, m, &expected);
}

void dump_to_file(FuzzInput& in, const Model& m) {
  const uint64_t how = in.take(1) % 5;
  const int format = static_cast<int>(in.take(1) % 3);
  const Totals expected = check_live_set(m, false);
  bool ok;
  int written_format = format;
  switch (how) {
    case 0:
      ok = hs_prof_dump(temp_path().c_str());
      written_format = HS_PROF_FORMAT_TEXT;
      break;
    case 1:
      ok = hs_prof_dump_proto(temp_path().c_str());
      written_format = HS_PROF_FORMAT_PROTO;
      break;
    case 2:
      ok = hs_prof_dump_format(temp_path().c_str(), format);
      break;
    case 3:  // the peak profile: another live set, checked for shape only
      ok = hs_prof_dump_peak(temp_path().c_str(), format);
      if (ok) check_dump(read_temp_file(), format, m, nullptr);
      std::remove(temp_path().c_str());
      return;
    default:  // an unwritable path fails cleanly
      if (hs_prof_dump_format("/nonexistent-dir/heapscope.prof", format)) {
        fail("a dump into a missing directory succeeded");
      }
      return;
  }
  if (ok) check_dump(read_temp_file(), written_format, m, &expected);
  std::remove(temp_path().c_str());
}

// Traffic on a helper thread's own blocks while this thread dumps and visits: nothing can be
// compared exactly, but every dump must still be well formed and nothing may crash.
void concurrent_dumps(FuzzInput& in, const Model& m) {
  const uint64_t seed = in.take(4);
  const int format = static_cast<int>(in.take(1) % 3);
  std::thread helper([seed] {
    void* own[16] = {};
    uint64_t x = seed | 1;
    for (int i = 0; i < 2000; ++i) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      void*& slot = own[x % 16];
      hs_free(slot);
      slot = (x >> 8) % 3 == 0 ? nullptr : hs_malloc((x >> 16) % 20000);
    }
    for (void* p : own) hs_free(p);
  });
  for (int round = 0; round < 3; ++round) {
    Sink sink;
    if (hs_prof_dump_format_writer(format, append_to_sink, &sink)) {
      check_dump(sink.bytes, format, m, nullptr);
    }
    VisitState state;
    state.max_depth = m.max_depth;
    if (!hs_prof_visit(add_stack, &state)) fail("hs_prof_visit failed outside a visitor");
  }
  helper.join();
}

void start(FuzzInput& in, Model& m) {
  static const uint64_t kIntervals[] = {1, 7, 64, 512, 4096, 65536};
  hs_prof_config_t config = HS_PROF_CONFIG_INIT;
  config.mode = HS_PROF_OVERRIDE;
  config.fields = HS_PROF_FIELD_SAMPLE_INTERVAL | HS_PROF_FIELD_SEED | HS_PROF_FIELD_ACCUM |
                  HS_PROF_FIELD_STACK_DEPTH | HS_PROF_FIELD_MAX_BYTES;
  config.sample_interval = kIntervals[in.take(1) % std::size(kIntervals)];
  config.seed = in.take(2) + 1;
  config.accum = static_cast<uint32_t>(in.take(1) % 2);
  config.max_stack_depth = static_cast<uint32_t>(1 + in.take(1) % HS_PROF_MAX_STACK_DEPTH);
  // Now and then a small budget, so the out-of-memory paths run too.
  config.max_bytes = in.take(1) % 4 == 0 ? (uint64_t{64} << 10) << (in.take(1) % 6) : 0;
  const bool started = hs_prof_start_ex(&config);
  if (started == m.running) fail("hs_prof_start_ex: started while running, or refused while not");
  if (!started) return;
  m.running = true;
  m.session++;
  m.interval = config.sample_interval;
  m.accum = config.accum != 0;
  m.max_depth = config.max_stack_depth;
  const hs_prof_stats_t stats = stats_now();
  if (!stats.enabled || stats.sample_interval != m.interval ||
      stats.max_stack_depth != m.max_depth || stats.live_samples != 0) {
    fail("a new session's stats are not its configuration");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzInput in{data, size};
  Model m;
  hs_prof_stop();  // a clean profiler whatever an earlier input left
  while (in.left > 0) {
    switch (in.take(1) % 13) {
      case 0:
        start(in, m);
        break;
      case 1:
        hs_prof_stop();
        m.running = false;
        check_live_set(m, false);
        break;
      case 2:
      case 3:
      case 4:
        traffic(in, m);
        break;
      case 5: {  // a batch on a helper thread (its heap is abandoned when it exits)
        const uint64_t count = 1 + in.take(1) % 16;
        std::thread helper([&in, &m, count] {
          for (uint64_t i = 0; i < count; ++i) traffic(in, m);
        });
        helper.join();
        break;
      }
      case 6:
      case 7:
        dump_to_memory(in, m);
        break;
      case 8:
        dump_to_file(in, m);
        break;
      case 9:
        check_live_set(m, true);
        break;
      case 10:
        check_snapshot(m);
        break;
      case 11:
        hs_prof_reset();
        if (m.running && stats_now().accum_samples != 0) fail("accum_samples after hs_prof_reset");
        break;
      default:
        concurrent_dumps(in, m);
        break;
    }
  }
  for (Block& b : m.blocks) hs_free(b.p);
  hs_prof_stop();
  return 0;
}
