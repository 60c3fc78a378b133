/* tide/tide.h — everything a C program needs to use the tide engine.
 * This header (minus vm.h) is also what the Lua binding's FFI declarations are made from. */
#ifndef TIDE_TIDE_H
#define TIDE_TIDE_H

#include "tide/export.h"
#include "tide/error.h"
#include "tide/dtype.h"
#include "tide/memory.h"
#include "tide/tensor.h"
#include "tide/ops.h"
#include "tide/random.h"
#include "tide/runtime.h"
#include "tide/graph.h"
#include "tide/safetensors.h"

#endif
