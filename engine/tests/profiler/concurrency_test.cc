// The profiler under concurrency: 8 threads allocate and free at a small interval (many
// samples), half of their frees cross-thread (blocks handed to the next thread through a
// queue), while another thread keeps dumping (text and proto, through writers), taking and
// visiting snapshots, visiting the live profile, dumping the peak profile and reading the
// stats; the sampling threads themselves write numbered interval profiles (the ctest entry sets
// HEAPSCOPE_PROF_DUMP_PREFIX and an allocation interval). Every call must
// succeed with self-consistent results, and once everything is freed the live counts and the
// interned stacks are back to zero. Runs under TSan (label tsan).
#include <gtest/gtest.h>
#include <heapscope/heapscope.h>
#include <heapscope/profile.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "../support/test_support.h"
#include "behaviour_support.h"

namespace {

using hs_prof_test::prof_stats;

constexpr int kThreads = 8;

struct Inbox {
  std::mutex lock;
  std::deque<std::pair<void*, size_t>> blocks;
  void push(void* p, size_t size) {
    std::lock_guard<std::mutex> guard(lock);
    blocks.emplace_back(p, size);
  }
  std::deque<std::pair<void*, size_t>> take() {
    std::lock_guard<std::mutex> guard(lock);
    std::deque<std::pair<void*, size_t>> out;
    out.swap(blocks);
    return out;
  }
};

// Writes nothing anywhere: counts bytes and calls, checks the first bytes of a text dump.
struct CountingWriter {
  uint64_t bytes = 0;
  uint64_t calls = 0;
  std::string head;
  static bool write(void* arg, const void* data, size_t len) {
    auto* w = static_cast<CountingWriter*>(arg);
    if (w->head.size() < 64) {
      w->head.append(static_cast<const char*>(data), std::min<size_t>(len, 64 - w->head.size()));
    }
    w->bytes += len;
    w->calls++;
    return true;
  }
};

struct MonitorResult {
  uint64_t rounds = 0;
  uint64_t rounds_while_working = 0;  // rounds that ended before the workers were done
  uint64_t failures = 0;
  uint64_t max_live_samples = 0;
  uint64_t peak_dumps = 0;
  std::string first_failure;
  void fail(const std::string& what) {
    if (failures++ == 0) first_failure = what;
  }
};

std::string first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

void monitor(std::atomic<bool>& done, MonitorResult& r, uint64_t interval,
             const std::string& peak_path) {
  while (!done.load(std::memory_order_acquire) || r.rounds < 3) {
    // The peak copy is replaced by sampling threads while this reads it; false only before
    // the session's first sample.
    if (hs_prof_dump_peak(peak_path.c_str(), HS_PROF_FORMAT_TEXT)) {
      if (first_line(peak_path).rfind("heap profile:", 0) != 0) r.fail("bad peak dump");
      r.peak_dumps++;
    }
    CountingWriter text;
    if (!hs_prof_dump_writer(CountingWriter::write, &text)) r.fail("dump_writer returned false");
    if (text.bytes == 0 || text.head.rfind("heap profile:", 0) != 0) r.fail("bad text dump");
    CountingWriter proto;
    if (!hs_prof_dump_proto_writer(CountingWriter::write, &proto)) r.fail("proto writer false");
    if (proto.bytes < 2 || static_cast<unsigned char>(proto.head[0]) != 0x1f) {
      r.fail("proto dump is not gzip");
    }
    hs_prof_snapshot_t* snapshot = hs_prof_snapshot_new();
    if (snapshot == nullptr) {
      r.fail("snapshot_new returned NULL");
    } else {
      hs_prof_test::VisitSums a, b;
      if (!hs_prof_snapshot_visit(snapshot, hs_prof_test::VisitSums::add, &a) ||
          !hs_prof_snapshot_visit(snapshot, hs_prof_test::VisitSums::add, &b)) {
        r.fail("snapshot_visit returned false");
      }
      if (a.live_objects != b.live_objects || a.live_bytes != b.live_bytes ||
          a.stacks != b.stacks) {
        r.fail("a snapshot changed between two visits");
      }
      if (!a.consistent) r.fail("inconsistent snapshot entry");
      hs_prof_snapshot_free(snapshot);
    }
    hs_prof_test::VisitSums live;
    if (!hs_prof_visit(hs_prof_test::VisitSums::add, &live)) r.fail("visit returned false");
    if (!live.consistent) r.fail("inconsistent visit entry");
    hs_prof_stats_t s = hs_prof_test::blank_stats();
    if (!hs_prof_stats_get(&s)) r.fail("stats_get returned false");
    if (s.enabled != 1 || s.sample_interval != interval) r.fail("session changed");
    r.max_live_samples = std::max(r.max_live_samples, s.live_samples);
    r.rounds++;
    if (!done.load(std::memory_order_acquire)) r.rounds_while_working++;
  }
}

// The numbered profiles the sampling threads wrote under HEAPSCOPE_PROF_DUMP_PREFIX (a
// "<dir>/conc.%p" prefix, at most 4 files a process): each a whole text profile. Counted once
// per process (the bound is per process, and ctest runs one test a process).
void check_and_remove_interval_dumps() {
  static bool checked = false;
  const char* prefix = std::getenv("HEAPSCOPE_PROF_DUMP_PREFIX");
  if (prefix == nullptr || checked) return;
  checked = true;
  std::string pattern = prefix;
  size_t escape = pattern.find("%p");
  ASSERT_NE(escape, std::string::npos) << pattern;
  pattern.replace(escape, 2, std::to_string(getpid()));
  std::filesystem::path stem(pattern);
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(stem.parent_path())) {
    std::string name = entry.path().filename().string();
    if (name.rfind(stem.filename().string() + ".", 0) != 0) continue;
    ++files;
    EXPECT_EQ(first_line(entry.path().string()).rfind("heap profile:", 0), 0u) << name;
    std::filesystem::remove(entry.path());
  }
  EXPECT_GE(files, 1) << "no interval profile under " << pattern;
  EXPECT_LE(files, 4) << "HEAPSCOPE_PROF_DUMP_MAX_FILES=4 was not kept";
}

// At 4 KiB every sample shares its page with other blocks (many samples); from 64 KiB up the
// sampled blocks of up to 512 B live on pages of their own, freed across threads as well.
class ProfConcurrencyAt : public ::testing::TestWithParam<uint64_t> {};

TEST_P(ProfConcurrencyAt, EightThreadsCrossThreadFreesWhileDumpingSnapshottingVisiting) {
  const uint64_t interval = GetParam();
  hs_prof_stop();
  ASSERT_TRUE(hs_prof_start_seeded(interval, 0xC0C0));
  const size_t iterations = hs_test::scaled(60000);
  std::vector<Inbox> inboxes(kThreads);
  std::atomic<uint64_t> allocated{0}, cross_frees{0}, local_frees{0}, bad{0};
  std::vector<double> expected_samples(kThreads, 0.0);  // sum of P(sampled) per thread
  std::atomic<bool> done{false};
  MonitorResult result;
  hs_prof_test::TempDir scratch;
  std::thread watcher(monitor, std::ref(done), std::ref(result), interval,
                      scratch.file("peak.heap"));
  auto started = std::chrono::steady_clock::now();
  std::vector<std::thread> workers;
  for (int t = 0; t < kThreads; ++t) {
    workers.emplace_back([&, t] {
      hs_test::SplitMix64 rng(1000 + static_cast<uint64_t>(t));
      std::vector<std::pair<void*, size_t>> mine;
      Inbox& next = inboxes[static_cast<size_t>((t + 1) % kThreads)];
      for (size_t i = 0; i < iterations; ++i) {
        size_t size = rng.next() % 16 == 0 ? rng.between(4096, 32768) : rng.between(16, 1024);
        auto* p = static_cast<unsigned char*>(hs_malloc(size));
        if (p == nullptr) {
          bad++;
          continue;
        }
        p[0] = static_cast<unsigned char>(t);
        p[size - 1] = static_cast<unsigned char>(t);
        allocated++;
        expected_samples[static_cast<size_t>(t)] +=
            -std::expm1(-static_cast<double>(size) / static_cast<double>(interval));
        if (rng.next() % 2 == 0) {
          next.push(p, size);  // freed by the next thread
        } else {
          mine.emplace_back(p, size);
        }
        if (mine.size() > 64) {
          size_t victim = rng.next() % mine.size();
          auto* q = static_cast<unsigned char*>(mine[victim].first);
          if (q[0] != t) bad++;
          hs_free(q);
          local_frees++;
          mine[victim] = mine.back();
          mine.pop_back();
        }
        if (i % 32 == 0) {
          for (auto [q, qsize] : inboxes[static_cast<size_t>(t)].take()) {
            auto* b = static_cast<unsigned char*>(q);
            if (b[0] != b[qsize - 1]) bad++;
            hs_free(q);
            cross_frees++;
          }
        }
      }
      for (auto [q, qsize] : mine) {
        (void)qsize;
        hs_free(q);
        local_frees++;
      }
    });
  }
  for (std::thread& w : workers) w.join();
  // What is still queued is freed here: cross-thread as well.
  for (Inbox& inbox : inboxes) {
    for (auto [q, qsize] : inbox.take()) {
      (void)qsize;
      hs_free(q);
      cross_frees++;
    }
  }
  done.store(true, std::memory_order_release);
  watcher.join();
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

  EXPECT_EQ(bad.load(), 0u);
  EXPECT_EQ(allocated.load(), kThreads * iterations);
  EXPECT_EQ(local_frees.load() + cross_frees.load(), allocated.load());
  EXPECT_GE(cross_frees.load(), allocated.load() * 2 / 5) << "about half the frees cross threads";
  EXPECT_EQ(result.failures, 0u) << result.first_failure;
  // The loop runs at least three rounds by construction; what matters is that some of them
  // overlapped the workers, or nothing here was concurrent.
  EXPECT_GE(result.rounds_while_working, 1u) << "no dump ran while the workers allocated";
  EXPECT_GT(result.max_live_samples, 0u) << "the monitor should see live samples";
  EXPECT_GT(result.peak_dumps, 0u) << "the peak profile was never dumped";

  hs_prof_stats_t s = prof_stats();
  std::printf("[concurrency] %zu allocations, %llu samples, %llu monitor rounds, %.2f s\n",
              static_cast<size_t>(allocated.load()),
              static_cast<unsigned long long>(s.total_samples),
              static_cast<unsigned long long>(result.rounds), seconds);
  // An allocation of s bytes is sampled with probability 1 - exp(-s/interval): far from the
  // expected count (thousands, so within a few percent) would mean lost or invented samples.
  double expected = 0;
  for (double e : expected_samples) expected += e;
  EXPECT_GT(static_cast<double>(s.total_samples), expected * 0.8);
  EXPECT_LT(static_cast<double>(s.total_samples), expected * 1.2);
  EXPECT_EQ(s.dropped_samples, 0u)
      << "no memory " << s.dropped_no_memory << ", empty stack " << s.dropped_empty_stack;
  EXPECT_EQ(s.live_samples, 0u);
  EXPECT_EQ(s.live_bytes, 0u);
  EXPECT_EQ(s.live_bytes_estimate, 0.0);
  EXPECT_EQ(s.unique_stacks, 0u);
  hs_prof_test::VisitSums sums = hs_prof_test::visit_now();
  EXPECT_EQ(sums.stacks, 0u);
  hs_prof_stop();
  check_and_remove_interval_dumps();
}

INSTANTIATE_TEST_SUITE_P(Intervals, ProfConcurrencyAt, ::testing::Values(4096, 64 * 1024),
                         [](const ::testing::TestParamInfo<uint64_t>& param) {
                           return "Interval" + std::to_string(param.param);
                         });

// Regression for a TSan report (outside the profiler): every dump and snapshot reads the
// allocator's statistics (take_copy -> hs_stats_get), whose readers of the owner-written
// counters must stay uninstrumented (OwnerCounter::get is no_sanitize("thread") itself, since
// TSan builds do not always inline it). One thread allocates, another reads the stats.
TEST(ProfConcurrency, StatsGetDoesNotRaceWithTheOwnersCounterAdds) {
  constexpr int kAllocations = 20000;
  std::atomic<int> progress{0};  // allocations made so far
  std::atomic<bool> done{false};
  // Only reads taken while the other thread is part-way through can race with its adds.
  std::atomic<uint64_t> overlapping_reads{0};
  std::thread allocator([&] {
    for (int i = 0; i < kAllocations; ++i) {
      hs_free(hs_malloc(64 + static_cast<size_t>(i % 512)));
      progress.store(i + 1, std::memory_order_relaxed);
      if (i + 1 == kAllocations / 2) {
        // Half-way, give a descheduled reader up to 2 s to overlap (a loaded machine can
        // otherwise run all the allocations between two reads).
        auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
        while (overlapping_reads.load() == 0 && std::chrono::steady_clock::now() < deadline) {
          std::this_thread::yield();
        }
      }
    }
    done.store(true);
  });
  do {
    int before = progress.load(std::memory_order_relaxed);
    hs_stats_t s;
    std::memset(&s, 0, sizeof s);
    s.size = sizeof s;
    s.version = HS_STATS_VERSION;
    ASSERT_EQ(hs_stats_get(&s), 0);
    int after = progress.load(std::memory_order_relaxed);
    if (before > 0 && after < kAllocations) overlapping_reads++;
  } while (!done.load());
  allocator.join();
  // Under TSan a race report fails the run (exit code 66); this checks there was a chance.
  EXPECT_GT(overlapping_reads.load(), 0u) << "no stats read overlapped the allocations";
}

}  // namespace
