-- stdlib/tide/init.lua — `local tide = require "tide"`: assembles the public
-- table from the modules below and gives every op its method form.
local binding = require "tide.binding"

-- One tide table per Lua state (see tide.binding): reloading must not build a
-- second library whose tensors would answer to the first one's methods.
local registry = debug.getregistry()
if registry["tide"] then return registry["tide"] end

do -- errors point past tide's own files to the user's line
  local src = debug.getinfo(1, "S").source
  local dir = src:sub(1, 1) == "@" and src:sub(2):match("^(.*)/[^/]*$")
  if dir then
    binding.add_internal_dir(dir)
    binding.add_internal_dir(dir .. "/ops")
  end
end

local ffi, C = binding.ffi, binding.C
local dtype = require "tide.dtype"
local convert = require "tide.convert"
local tensor = require "tide.tensor"
local math_ops = require "tide.ops.math"
local reduce_ops = require "tide.ops.reduce"   -- reductions, scans, sort, top_k
local shape_ops = require "tide.ops.shape"     -- views and shape ops
local linalg_ops = require "tide.ops.linalg"   -- matmul, band parts, diagonals, tensordot ...
local decomp_ops = require "tide.ops.linalg_decomp" -- cholesky, qr, svd, eigh, solve ...
local norm_ops = require "tide.ops.linalg_norm" -- norm, global_norm, l2_normalize, normalize
local create_ops = require "tide.ops.create"   -- zeros, ones, range, eye, from_buffer ...
local scatter_ops = require "tide.ops.scatter" -- scatter_add (gather's inverse)
local index_ops = require "tide.ops.index"     -- gather_nd, scatter_nd, boolean_mask, unique
local segment_ops = require "tide.ops.segment" -- segment_sum and the segment family

local tide = {
  _VERSION = ffi.string(C.tide_version()),
  config = require "tide.config",
  newaxis = tensor.newaxis,
  Shape = require("tide.tensor_shape").Shape,
}

for name, v in pairs(dtype.constants) do tide[name] = v end
tide.double, tide.half = dtype.constants.float64, dtype.constants.float16 -- TF's other names of them

-- tide.tensor(value, dtype) and TF's name for it.
function tide.tensor(value, dt) return convert.tensor(value, dt, "tensor") end
tide.constant = tide.tensor
tide.convert_to_tensor = tide.tensor

-- True when x is a tide tensor.
tide.is_tensor = binding.istensor

local methods, impl = binding.methods, binding.impl

-- Devices: tide.device("cuda:0", fn) places tide.tensor's results there;
-- x:to(name), x:cpu() move tensors (tide.config has the GPU queries).
do
  local device = require "tide.device"
  local make = tide.tensor
  function tide.tensor(value, dt) return device.place(make(value, dt)) end
  tide.constant, tide.convert_to_tensor = tide.tensor, tide.tensor
  tide.device = device.scope
  methods.to, methods.cpu = device.to, device.cpu
end

-- Functions whose first argument is not one tensor make poor methods.
local NOT_METHODS = { concat = true, stack = true }

-- Export functions as tide.<name> and as methods x:<name>(...).
local function export(mod, opts)
  opts = opts or {}
  for name, fn in pairs(mod) do
    if type(fn) == "function" then
      if not opts.no_top then tide[name] = fn end
      if not opts.no_methods and not NOT_METHODS[name] then methods[name] = fn end
    end
  end
end

export(math_ops)
export(reduce_ops)
export(shape_ops)
-- TF's top-level names of tf.linalg's functions (the rest are tide.linalg's only:
-- tide.trace is tf.function, so the matrix trace is tide.linalg.trace)
export({ matmul = linalg_ops.matmul, tensordot = linalg_ops.tensordot })
export({ norm = norm_ops.norm }, { no_methods = true })
export(require "tide.ops.einsum", { no_methods = true }) -- einsum: matmuls between views, no kernel of its own
export(require "tide.ops.update")              -- slice_update
export(create_ops, { no_methods = true })
export(scatter_ops)
export(index_ops)
export(segment_ops)
do -- shapes as tensors: tf.shape, tf.size, tf.rank (x.shape stays the Lua list)
  local dyn = require "tide.ops.dynamic_shape"
  export({ shape = dyn.shape, num_elements = dyn.num_elements, rank = dyn.rank, ensure_shape = dyn.ensure_shape },
    { no_methods = true })
end
tide.nest = require "tide.nest"   -- tf.nest: flatten, pack_sequence_as, map_structure (docs/nest.md)

-- Autodiff: Variables and GradientTape (TF 2's), gradient control.
local variable = require "tide.variable"
local tape = require "tide.tape"
tide.Variable = variable.Variable
tide.is_variable = variable.is_variable
tide.GradientTape = tape.GradientTape
tide.stop_gradient = tape.stop_gradient
tide.custom_gradient = tape.custom_gradient
tide.recompute_grad = tape.recompute_grad

-- Tracing: tide.trace (TF's tf.function) and its specs.
local tracing = require "tide.tracing.function"
local spec = require "tide.tracing.spec"
tide.trace = tracing.trace
tide.TensorSpec = spec.TensorSpec
tide.None = spec.None
tide.print = require("tide.tracing.print").print
-- Control flow (TF's tf.cond, tf.while_loop, tf.TensorArray) and a tensor-bounded loop.
local control = require "tide.tracing.control"
tide.cond = control.cond
tide.while_loop = control.while_loop
tide.for_range = control.for_range
tide.TensorArray = control.TensorArray
-- Tapes through traced calls and through cond/while_loop nodes: these sit
-- above tide.trace and control flow, and hook themselves in when loaded.
require "tide.tracing.gradient"
require "tide.tracing.control_grad"
export({ item = tensor.item, totable = tensor.totable, slice = tensor.slice, size = tensor.size,
         copy_ = tensor.copy_ }, { no_top = true })
tide.size = tensor.size

-- The Lua operators forward here.
for _, name in ipairs { "add", "sub", "mul", "div", "mod", "pow", "neg" } do impl[name] = math_ops[name] end

-- Namespaces a script may never touch load on first use, as Keras does below:
-- lazy(t, loaders) makes t[name] call loaders[name]() once and keep what it
-- returns. The metatable's __lazy lists the names for the REPL's completion
-- and help, which load nothing. (A tensor-only script then starts without
-- the image, signal, string, linalg and nn families' modules.)
local function lazy(t, loaders)
  return setmetatable(t, {
    __lazy = loaders,
    __index = function(tbl, k)
      local load = loaders[k]
      if not load then return nil end
      local v = load()
      rawset(tbl, k, v)
      return v
    end,
  })
end

-- tide.math.* (TF's namespace) holds the same functions.
tide.math = {}
for name, fn in pairs(math_ops) do tide.math[name] = fn end
for name, fn in pairs(reduce_ops) do tide.math[name] = fn end
for name, fn in pairs(segment_ops) do tide.math[name] = fn end

-- The rest of tf.math, composed of the ops above (tide.add_n also at the top, as tf.add_n), and
-- tf.nn's names that live in tide.nn below.
for name, fn in pairs(require "tide.ops.math_more") do tide.math[name] = fn end
tide.add_n = tide.math.add_n
tide.math.l2_normalize = norm_ops.l2_normalize
lazy(tide.math, {
  betainc = function() return require("tide.ops.betainc").betainc end,
  -- tide.math.special.* (tf.math.special: Bessel functions, dawsn, expint, fresnel_*, spence).
  special = function() return require "tide.ops.special" end,
  softmax = function() return require("tide.ops.nn").softmax end,
  log_softmax = function() return require("tide.ops.nn").log_softmax end,
})
-- tide.raw_ops.*: ops only a gradient runs (TF's tf.raw_ops: igamma_grad_a).
tide.raw_ops = require("tide.ops.plain").define("raw", {})

local namespaces = {}

-- tide.random.* (TF's tf.random), with the candidate samplers (tf.random's and tf.nn's).
function namespaces.random()
  local random = require "tide.random"
  for name, fn in pairs(require "tide.ops.candidate_sampling") do random[name] = fn end
  return random
end

-- tide.image.* (tf.image and tf.io's image codecs).
function namespaces.image() return require "tide.image" end

-- tide.bitwise.* (TF's namespace, no methods): and, or, xor, invert, shifts.
function namespaces.bitwise()
  local t = {}
  for name, fn in pairs(require "tide.ops.bitwise") do t[name] = fn end
  return t
end

-- tide.strings.* (TF's tf.strings): split, regex_replace, lower, length, to_number, join, ...
function namespaces.strings() return require "tide.ops.strings" end
function namespaces.RaggedTensor() return require("tide.ops.strings").RaggedTensor end
-- tide.lookup: hashed vocabularies as tensors (table, find) and ragged_to_tensor
function namespaces.lookup() return require "tide.ops.lookup" end

-- tide.signal.* (TF's namespace): Fourier transforms, framing, spectrograms, DCTs, mel filters, windows.
function namespaces.signal()
  local t = {}
  for name, fn in pairs(require "tide.ops.signal_windows") do t[name] = fn end
  local fourier = require "tide.ops.signal"
  for _, name in ipairs { "fft", "ifft", "fft2d", "ifft2d", "fft3d", "ifft3d", "rfft", "irfft", "rfft2d", "irfft2d",
                          "rfft3d", "irfft3d", "fftnd", "ifftnd", "rfftnd", "irfftnd", "fftshift", "ifftshift" } do
    t[name] = fourier[name]
  end
  for name, fn in pairs(require "tide.ops.signal_spectral") do t[name] = fn end
  return t
end

-- tide.linalg.* (TF's namespace): products, structure, decompositions, solvers and norms.
function namespaces.linalg()
  local t = { eye = create_ops.eye, einsum = tide.einsum }
  for _, mod in ipairs { linalg_ops, require "tide.ops.linalg_decomp", norm_ops } do
    for name, fn in pairs(mod) do t[name] = fn end
  end
  -- tf.linalg's LinearOperator classes (structured operators, ops/linop/) load on first use too
  -- (tests/spec/ops/linop_spec.lua checks this list against the classes).
  local loaders = {}
  for _, short in ipairs { "", "Adjoint", "BlockDiag", "BlockLowerTriangular", "Circulant", "Circulant2D",
                           "Circulant3D", "Composition", "Diag", "FullMatrix", "Householder", "Identity", "Inversion",
                           "Kronecker", "LowRankUpdate", "LowerTriangular", "Permutation", "ScaledIdentity",
                           "Toeplitz", "Tridiag", "Zeros" } do
    local name = "LinearOperator" .. short
    loaders[name] = function() return require("tide.ops.linop")[name] end
  end
  return lazy(t, loaders)
end

-- tide.nn.*: activations, softmax and losses, norms, dropout, convolutions and pooling.
function namespaces.nn()
  local nn = {}
  for _, name in ipairs { "relu", "elu", "selu", "gelu", "softplus", "sigmoid", "tanh", "leaky_relu", "relu6", "softsign" } do
    nn[name] = math_ops[name]
  end
  for _, mod in ipairs { require "tide.ops.nn", require "tide.ops.nn_conv", require "tide.ops.nn_conv_nd",
                         require "tide.ops.nn_more", require "tide.ops.nn_pool_more", require "tide.ops.morphology",
                         require "tide.ops.nn_forms", require "tide.ops.embedding_sparse",
                         require "tide.ops.nn_pool_index", require "tide.ops.nn_space" } do
    for name, fn in pairs(mod) do
      if type(fn) == "function" then nn[name] = fn end
    end
  end
  -- ctc_greedy_decoder(inputs, sequence_length, merge_repeated=true, blank_index=nil): TF's
  -- ({SparseTensor}, log_probabilities); the decoding is ops/ctc.lua's.
  function nn.ctc_greedy_decoder(...)
    local indices, values, dense_shape, log_probabilities = require("tide.ops.ctc").greedy_decode(...)
    return { require("tide.sparse_tensor").SparseTensor(indices, values, dense_shape) }, log_probabilities
  end
  -- ctc_beam_search_decoder(inputs, sequence_length, beam_width=100, top_paths=1): TF's ({SparseTensor, ...},
  -- log_probabilities); the search is ops/ctc_decode.lua's. The CTC loss and its helpers are plain functions.
  function nn.ctc_beam_search_decoder(...)
    local decoded, log_probabilities = require("tide.ops.ctc_decode").beam_search_decode(...)
    local SparseTensor = require("tide.sparse_tensor").SparseTensor
    for i, d in ipairs(decoded) do decoded[i] = SparseTensor(d[1], d[2], d[3]) end
    return decoded, log_probabilities
  end
  nn.ctc_loss = require("tide.ops.ctc_loss").ctc_loss
  nn.collapse_repeated = require("tide.ops.ctc_decode").collapse_repeated
  nn.ctc_unique_labels = require("tide.ops.ctc_decode").ctc_unique_labels
  -- The candidate samplers (tf.nn has all but the two tf.random-only ones) and the sampled losses.
  for name, fn in pairs(require "tide.ops.candidate_sampling") do
    if name ~= "uniform_candidate_sampler" and name ~= "log_uniform_candidate_sampler" then nn[name] = fn end
  end
  local sampled = require "tide.ops.sampled_losses"
  nn.nce_loss, nn.sampled_softmax_loss = sampled.nce_loss, sampled.sampled_softmax_loss
  -- tf.nn's names that tf.math has too.
  for _, name in ipairs { "l2_normalize", "zero_fraction", "in_top_k", "top_k", "approx_max_k", "approx_min_k" } do
    nn[name] = tide.math[name]
  end
  return nn
end

-- Keras (initializers, activations, regularizers, constraints, losses, metrics,
-- optimizers, layers, models, callbacks) loads on first use: a third of
-- tide's Lua code, kept out of the heap of scripts that only use tensors
-- (every collection marks the whole heap: a smaller one makes the eager
-- ops' collections cheaper). tide.layers and the rest read as usual.
-- tide.models, with model:save, load_model and the Keras weights files
-- handed down by the saving floor (tide.saving, which sits above models)
local function keras_models()
  local models = require "tide.models"
  require "tide.saving"
  return models
end

local keras = {
  -- keras.ops (numpy-style names; docs/api.md's tide.ops section). Not the tide.ops.* modules' table.
  -- (tide.tracing.keras_ops adds the names that need tracing or the tape: cond, scan, custom_gradient ...)
  ops = function()
    local ops = require "tide.ops.keras"
    for k, v in pairs(require "tide.tracing.keras_ops") do ops[k] = v end
    return ops
  end,
  initializers = function() return require "tide.initializers" end,
  activations = function() return require "tide.activations" end,
  regularizers = function() return require "tide.regularizers" end,
  constraints = function() return require "tide.constraints" end,
  keras_mask = function() return require "tide.keras_mask" end,
  -- (with the TF SavedModel reader that tide.layers.TFSMLayer is handed)
  layers = function() require "tide.saved_model.tf_restore"; return require "tide.layers" end,
  -- TF Hub's hub.KerasLayer
  hub = function()
    require "tide.saved_model.tf_restore"
    return { KerasLayer = require("tide.layers.tfsm").KerasLayer }
  end,
  losses = function() return require "tide.losses" end,
  metrics = function() return require "tide.metrics" end,
  optimizers = function() return require "tide.optimizers" end,
  models = function() return keras_models() end,
  callbacks = function() return require "tide.callbacks" end,
  Model = function() return keras_models().Model end,
  Sequential = function() return keras_models().Sequential end,
  Input = function() return require("tide.layers").Input end,
  data = function() return require "tide.data" end,
  datasets = function() return require "tide.datasets" end,
  -- keras.utils: image/text datasets from folder trees, to_categorical, pad_sequences ... (docs/data.md)
  utils = function()
    -- keras.utils' names of things that live on higher floors (layers), found when first read
    local utils = require "tide.utils"
    local above = {
      clear_session = function() return require("tide.layers").clear_session end,
      is_keras_tensor = function() return require("tide.layers").is_keras_tensor end,
      Progbar = function() return require("tide.models.progbar").public end,
      get_source_inputs = function() return require("tide.layers.keras_tensor").get_source_inputs end,
      model_to_dot = function() return require("tide.models.visualization").model_to_dot end,
      plot_model = function() return require("tide.models.visualization").plot_model end,
    }
    for _, k in ipairs { "CustomObjectScope", "custom_object_scope", "register_keras_serializable", "get_registered_name",
      "get_registered_object", "get_custom_objects", "serialize_keras_object", "deserialize_keras_object" } do
      above[k] = function() keras_models(); return require("tide.saving")[k] end
    end
    return setmetatable(utils, { __index = function(t, k)
      if not above[k] then return nil end
      local v = above[k]()
      rawset(t, k, v)
      return v
    end })
  end,
  saved_model = function() return require "tide.saved_model" end,
  onnx = function() return require "tide.saved_model.onnx" end,
  -- Keras 3's files (.keras, .weights.h5) and the saving entry points (keras.saving)
  saving = function() keras_models(); return require "tide.saving" end,
  -- keras.applications (MobileNetV2, ResNet50/101/152, VGG16/19), with the saving floor for weights files
  applications = function() keras_models(); return require "tide.applications" end,
  -- file formats (TFRecord, tf.train.Example) and TF's SparseTensor
  io = function() return require "tide.io" end,
  SparseTensor = function() return require("tide.sparse_tensor").SparseTensor end,
}
-- TensorBoard logs (tf.summary), also on first use.
keras.summary = function() return require "tide.summary" end
-- tf.audio (decode_wav), on first use.
keras.audio = function() return require "tide.audio" end
-- Saving loads on first use too: tide.safetensors (weights files) and
-- tide.train (Checkpoint, CheckpointManager).
keras.safetensors = function() return require "tide.safetensors" end
-- keras_hub's tokenizers (tide.text.WordPieceTokenizer, BytePairTokenizer), on first use.
keras.text = function() return require "tide.layers.preprocessing.tokenizers" end
-- The profiler and debugging aids (tf.profiler, tf.debugging), on first use.
keras.profiler = function() return require "tide.profiler" end
keras.debugging = function() return require "tide.debugging" end
keras.train = function() return require "tide.train" end
-- TF's tf.sparse and tf.SparseTensorSpec, on first use.
keras.sparse = function()
  local m = require "tide.sparse_tensor"
  local t = { SparseTensor = m.SparseTensor, to_dense = m.to_dense, from_dense = m.from_dense, reorder = m.reorder,
    is_sparse = m.is_sparse }
  -- the rest of tf.sparse (stdlib/tide/sparse/: index moves in ops.lua, arithmetic in math.lua)
  for _, mod in ipairs { require "tide.sparse.ops", require "tide.sparse.math" } do
    for k, v in pairs(mod) do
      if k ~= "sp_arg" and k ~= "build" then t[k] = v end
    end
  end
  t.cross_hashed = m.cross_hashed
  return t
end
keras.SparseTensorSpec = function() return require("tide.sparse_tensor").SparseTensorSpec end
-- Mixed precision (keras.mixed_precision): dtype policies, on first use.
keras.mixed_precision = function() return require "tide.mixed_precision" end
-- Strategies (tf.distribute): the default, OneDevice and MultiWorkerMirrored over MPI, on first use.
keras.distribute = function() return require "tide.distribute" end

-- TF's top-level names (tf.X) of functions that live in one of tide's namespaces: the same function, no
-- second implementation. Each loads its namespace on first read, as the namespaces themselves do, so
-- `require "tide"` loads none of them (tests/spec/ops/tf_top_aliases_spec.lua).
local tf_top = {
  eig = { "linalg", "eig" }, eigvals = { "linalg", "eigvals" }, matrix_square_root = { "linalg", "sqrtm" },
  fftnd = { "signal", "fftnd" }, ifftnd = { "signal", "ifftnd" }, rfftnd = { "signal", "rfftnd" },
  irfftnd = { "signal", "irfftnd" },
  as_string = { "strings", "as_string" },
  assert_equal = { "debugging", "assert_equal" }, assert_rank = { "debugging", "assert_rank" },
  -- tf.space_to_batch and tf.space_to_batch_nd are one op (tf.nn.space_to_batch's)
  space_to_batch = { "nn", "space_to_batch" }, space_to_batch_nd = { "nn", "space_to_batch" },
  scalar_mul = { "math", "scalar_mul" },
  -- tf.X_initializer are Keras's initializer classes (tf.constant_initializer takes only a scalar here:
  -- docs/tf_differences.md)
  constant_initializer = { "initializers", "Constant" }, zeros_initializer = { "initializers", "Zeros" },
  ones_initializer = { "initializers", "Ones" }, random_normal_initializer = { "initializers", "RandomNormal" },
  random_uniform_initializer = { "initializers", "RandomUniform" },
  -- keras.ops' forms where TF's have the same arguments and results
  meshgrid = { "ops", "meshgrid" }, ["repeat"] = { "ops", "repeat" }, saturate_cast = { "ops", "saturate_cast" },
  vectorized_map = { "ops", "vectorized_map" },
}
for name, at in pairs(tf_top) do
  keras[name] = function() return tide[at[1]][at[2]] end
end
-- TF's helpers about the running mode and lists of tensors (executing_eagerly, identity_n, shape_n ...)
for _, name in ipairs { "executing_eagerly", "inside_function", "no_op", "identity_n", "shape_n",
                        "broadcast_static_shape", "as_dtype", "get_static_value" } do
  keras[name] = function() return require("tide.tracing.tf_misc")[name] end
end
-- TF's functional control flow (tracing/tf_control.lua: map_fn, foldl, foldr, scan, switch_case, case; tide.ops.scan
-- is keras.ops' form)
for _, name in ipairs { "map_fn", "foldl", "foldr", "scan", "switch_case", "case" } do
  keras[name] = function() return require("tide.tracing.tf_control")[name] end
end
-- TF's data-routing ops (ops/tf_partition.lua: dynamic_partition/stitch, tensor_scatter_nd_max/min,
-- parallel_stack)
for _, name in ipairs { "dynamic_partition", "dynamic_stitch", "tensor_scatter_nd_max", "tensor_scatter_nd_min",
                        "parallel_stack" } do
  keras[name] = function() return require("tide.ops.tf_partition")[name] end
end
-- TF's array ops that tide had in no namespace (ops/tf_array.lua: roll, searchsorted, sequence_mask ...)
for _, name in ipairs { "roll", "searchsorted", "sequence_mask", "unravel_index", "clip_by_norm",
                        "clip_by_global_norm", "reverse_sequence", "histogram_fixed_width",
                        "histogram_fixed_width_bins", "unique_with_counts" } do
  keras[name] = function() return require("tide.ops.tf_array")[name] end
end
-- TF's top-level ops composed of registry ops (ops/tf_top_ops.lua: slice, strided_slice, realdiv, conv ...; tide.slice
-- is tf.slice(x, begin, size), while the method x:slice{spec} keeps its index-spec form) and helpers over lists,
-- sparse and ragged values and the clock (ops/tf_top_misc.lua: edit_distance, tuple, timestamp ...)
for _, name in ipairs { "slice", "strided_slice", "realdiv", "batch_to_space", "required_space_to_batch_paddings",
                        "broadcast_dynamic_shape", "approx_top_k", "conv", "conv2d_backprop_filter_v2",
                        "conv2d_backprop_input_v2", "extract_volume_patches", "bitcast", "fingerprint" } do
  keras[name] = function() return require("tide.ops.tf_top_ops")[name] end
end
for _, name in ipairs { "edit_distance", "ragged_fill_empty_rows", "ragged_fill_empty_rows_grad", "guarantee_const",
                        "group", "tuple", "timestamp", "random_index_shuffle" } do
  keras[name] = function() return require("tide.ops.tf_top_misc")[name] end
end
-- tf.debugging's assertions that TF also has at the top (tf.Assert, tf.assert_greater, tf.assert_less)
for _, name in ipairs { "Assert", "assert_greater", "assert_less" } do
  keras[name] = function() return require("tide.debugging.assertions")[name] end
end
-- TF's type names and small classes (tracing/tf_types.lua: Tensor, TensorShape, DType, the TypeSpecs,
-- IndexedSlices, the enums, DeviceSpec, CriticalSection, get_logger ...)
for _, name in ipairs { "Tensor", "TensorShape", "DType", "is_symbolic_tensor", "TypeSpec", "NoneTensorSpec",
                        "RaggedTensorSpec", "IndexedSlicesSpec", "TensorArraySpec", "OptionalSpec", "IndexedSlices",
                        "type_spec_from_value", "VariableAggregation", "VariableSynchronization", "AggregationMethod",
                        "UnconnectedGradients", "DeviceSpec", "CriticalSection", "get_logger", "check_pinned",
                        "register_tensor_conversion_function", "nondifferentiable_batch_function" } do
  keras[name] = function() return require("tide.tracing.tf_types")[name] end
end
-- TF's name scopes, tf.Module, variable creators and graph-mode gradients (tracing/tf_module.lua)
for _, name in ipairs { "name_scope", "get_current_name_scope", "init_scope", "Module", "variable_creator_scope",
                        "gradients", "hessians", "grad_pass_through", "no_gradient", "RegisterGradient" } do
  keras[name] = function() return require("tide.tracing.tf_module")[name] end
end
for name, load in pairs(namespaces) do keras[name] = load end
lazy(tide, keras)

registry["tide"] = tide
return tide
