// Options (options.cc): read once from HEAPSCOPE_* environment variables, settable by
// hs_option_set.
#pragma once

#include "heapscope/heapscope.h"

namespace heapscope {

long option(hs_option_t which);
void options_init();

}  // namespace heapscope
