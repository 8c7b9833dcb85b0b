// A consistent copy of the built-in profile, taken under the lock into raw OS pages, so that
// dumps and snapshots format it without the lock (and without the allocator).
#pragma once

#include "profiler/os_buffer.h"
#include "profiler/profile_data.h"

namespace heapscope::prof {

struct ProfileCopy {
  OsBuffer stacks;  // ProfileStack[]
  OsBuffer frames;  // uintptr_t[] of every stack, back to back
  bool ok = true;
};

// Copies the profile under the lock; fills `profile` to point into `copy`. False without
// memory for the copy.
bool take_copy(ProfileCopy& copy, ProfileData& profile);

}  // namespace heapscope::prof
