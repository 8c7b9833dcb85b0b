// Umbrella header of the statistics layer (depends on nothing else in heapscope).
#pragma once

#include "stats/bootstrap_seed.h"
#include "stats/fnv1a.h"
#include "stats/paired_effect.h"
#include "stats/quantile.h"
#include "stats/splitmix64.h"
