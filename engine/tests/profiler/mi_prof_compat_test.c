// mimalloc-pprof's mi_prof_* names through heapscope/mi_prof_compat.h, compiled as C (the
// header must stay valid C), against the hs_* library: a program written for mimalloc-pprof
// profiler starts, samples, dumps through a void-returning writer, reads stats and stops.
// Exit 0 on success; a failing step exits with its number.
#include <heapscope/mi_prof_compat.h>
#include <stdio.h>
#include <string.h>

static size_t g_written;
static int g_saw_header;

static void count_writer(void* arg, const char* buf, size_t len) {
  (void)arg;
  if (g_written == 0 && len >= 13 && memcmp(buf, "heap profile:", 13) == 0) g_saw_header = 1;
  g_written += len;
}

int main(void) {
  enum { kBlocks = 2000 };
  static void* blocks[kBlocks];
  if (mi_prof_is_enabled()) return 1;
  if (!mi_prof_start_seeded(4096, 11)) return 2;
  if (!mi_prof_is_enabled()) return 3;
  for (int i = 0; i < kBlocks; ++i) blocks[i] = hs_malloc(512);
  mi_prof_stats_t stats = HS_PROF_STATS_INIT;
  if (!mi_prof_stats_get(&stats)) return 4;
  // 2000 x 512 B at a 4096-byte mean interval: about 236 samples expected.
  if (stats.live_samples < 120 || stats.live_samples > 360) return 5;
  if (!mi_prof_dump_writer(count_writer, NULL) || g_written == 0 || !g_saw_header) return 6;
  size_t records = 0, bytes = 0, stacks = 0;
  mi_prof_debug_stats(&records, &bytes, &stacks);
  if (records != stats.live_samples || bytes == 0 || stacks == 0) return 7;
  for (int i = 0; i < kBlocks; ++i) hs_free(blocks[i]);
  if (!mi_prof_stats_get(&stats) || stats.live_samples != 0) return 8;
  mi_prof_stop();
  if (mi_prof_is_enabled()) return 9;
  printf("mi_prof compat: %zu records, %zu bytes of profile text\n", records, g_written);
  return 0;
}
