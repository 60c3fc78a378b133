/* tide/tide.h — everything a C program needs to use the tide engine.
 * This header (minus vm.h) is also what the Lua binding's FFI declarations are made from. */
#ifndef TIDE_TIDE_H
#define TIDE_TIDE_H

#include "tide/export.h"
#include "tide/error.h"
#include "tide/dtype.h"
#include "tide/memory.h"
#include "tide/tensor.h"
#include "tide/strings.h"
#include "tide/ops.h"
#include "tide/random.h"
#include "tide/runtime.h"
#include "tide/graph.h"
#include "tide/records.h"
#include "tide/summary.h"
#include "tide/data.h"
#include "tide/data_cache.h"
#include "tide/saved_model.h"
#include "tide/json.h"
#include "tide/safetensors.h"
#include "tide/tensor_bundle.h"
#include "tide/tf_saved_model.h"
#include "tide/onnx.h"
#include "tide/file_kind.h"
#include "tide/h5.h"
#include "tide/zip.h"
#include "tide/npy.h"
#include "tide/files.h"
#include "tide/profiler.h"
#include "tide/device.h"
#include "tide/dist.h"

#endif
