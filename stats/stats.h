// Umbrella header of the statistics layer (depends only on base/ within heapscope).
#pragma once

#include "stats/bootstrap_seed.h"
#include "stats/geomean_effect.h"
#include "stats/log_linear_histogram.h"
#include "stats/paired_effect.h"
#include "stats/quantile.h"
