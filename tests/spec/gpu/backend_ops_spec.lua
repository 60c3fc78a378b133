-- Every registry op with a CUDA kernel, run on the GPU and on the CPU on the
-- same random inputs (ggml's test-backend-ops idea): the results must agree
-- (bit for bit for uniforms, within a tolerance elsewhere). Without a GPU the
-- file prints "SKIP N: no GPU visible ..." and counts nothing as passed.
local tide = require "tide"
local binding = require "tide.binding"
local dispatch = require "tide.dispatch"
local device = require "tide.device"
local ffi, C = binding.ffi, binding.C
local bit = require "bit"

tide.random.set_seed(1234)

local GPU = "cuda:0"
local FLOATS = { "float32", "float64" }
local INTS = { "int32", "int64", "int8" }

-- Random inputs by dtype and domain.
local function floats(shape, dt, lo, hi) return tide.random.uniform(shape, { minval = lo or -2, maxval = hi or 2, dtype = dt }) end
local function ints(shape, dt, lo, hi) return tide.random.uniform(shape, { minval = lo or -5, maxval = hi or 6, dtype = dt }) end
local function bools(shape) return tide.random.uniform(shape, { minval = 0, maxval = 1 }):greater(0.5) end

-- Ops whose inputs must stay in a domain (else both sides give NaN or errors).
local POSITIVE = { log = true, log1p = true, sqrt = true, rsqrt = true, reciprocal = true, xlogy = true,
                   xlog1py = true, pow = true }
local NONZERO_DIVISOR = { div = true, floordiv = true, mod = true, truncatediv = true, truncatemod = true,
                          xdivy = true }

-- cases[i] = { name, op, inputs (CPU tensors), set_attrs (or nil), tolerance, exact }
local cases = {}
local function add(op, name, inputs, set_attrs, tol, exact)
  cases[#cases + 1] = { op = op, name = name, inputs = inputs, set_attrs = set_attrs, tol = tol, exact = exact }
end

local ELEMENTWISE = C.TIDE_OPF_ELEMENTWISE
local DTS_FLOAT, DTS_INT, DTS_BOOL = C.TIDE_DTS_FLOAT, C.TIDE_DTS_INT, C.TIDE_DTS_BOOL
local function accepts(op, mask) return bit.band(C.tide_op_dtypes(op), mask) ~= 0 end
local function tol_of(dt) return dt == "float64" and 1e-10 or 2e-5 end

-- Elementwise ops: same-shape, broadcast ({3,1} with {1,4}) and strided (a transposed view) inputs.
local function elementwise_cases(op, name, nin)
  local function inputs_for(dt, shapes, kind)
    local list = {}
    for i = 1, nin do
      local s = shapes[i] or shapes[1]
      local t
      if kind == "bool" then t = bools(s)
      elseif kind == "int" then
        t = ints(s, dt, (i == 2 and (NONZERO_DIVISOR[name] or name == "pow")) and 1 or -5, name == "pow" and 4 or 6)
      else
        local lo = (POSITIVE[name] and (i == 1 or name ~= "pow")) and 0.1 or -2
        if name == "pow" and i == 2 then lo = -2 end
        t = floats(s, dt, lo, 2)
        if NONZERO_DIVISOR[name] and i == 2 then t = t + tide.sign(t) * 0.5 end
      end
      list[i] = t
    end
    return list
  end
  local shapes = { { { 4, 5 } }, { { 3, 1 }, { 1, 4 } } }
  if name == "where" then shapes = { { { 4, 5 } }, { { 3, 1 }, { 1, 4 }, { 3, 4 } } } end
  for _, sh in ipairs(shapes) do
    if name == "where" then
      for _, dt in ipairs(FLOATS) do
        add(op, name .. " " .. dt, { bools(sh[1]), floats(sh[2] or sh[1], dt), floats(sh[3] or sh[1], dt) }, nil, 0)
      end
    elseif name == "cast" then
      for _, pair in ipairs { { "float32", "int32" }, { "int32", "float32" }, { "float32", "bool" }, { "float64", "float16" },
                              { "float32", "bfloat16" }, { "int64", "int8" } } do
        local x = pair[1]:match("int") and ints(sh[1], pair[1], -300, 300) or floats(sh[1], pair[1], -300, 300)
        add(op, "cast " .. pair[1] .. " to " .. pair[2], { x }, function(a) a.dtype = C["TIDE_" .. pair[2]:upper()] end, 0)
      end
    elseif name == "logical_not" or (accepts(op, DTS_BOOL) and not accepts(op, DTS_FLOAT + DTS_INT)) then
      add(op, name .. " bool", inputs_for("bool", sh, "bool"), nil, 0)
    else
      if accepts(op, DTS_FLOAT) then
        for _, dt in ipairs(FLOATS) do
          add(op, name .. " " .. dt .. " " .. #sh, inputs_for(dt, sh, "float"), nil, tol_of(dt))
        end
      end
      if accepts(op, DTS_INT) then
        for _, dt in ipairs(INTS) do add(op, name .. " " .. dt .. " " .. #sh, inputs_for(dt, sh, "int"), nil, 0) end
      end
    end
  end
  -- A transposed (strided) first input.
  if name ~= "where" and name ~= "cast" and accepts(op, DTS_FLOAT) then
    local list = inputs_for("float32", { { 5, 4 } }, "float")
    list[1] = list[1]:transpose()
    add(op, name .. " strided", list, nil, tol_of("float32"))
  end
end

local REDUCE = { sum = true, mean = true, max = true, min = true, prod = true, any = true, all = true }
local RANDOM = { random_uniform = true, random_normal = true, truncated_normal = true }

for op = 0, C.TIDE_NUM_OPS - 1 do
  if C.tide_op_has_cuda_kernel(op) then
    local name = ffi.string(C.tide_op_name(op))
    local flags = C.tide_op_flags(op)
    if REDUCE[name] then
      for _, axes in ipairs { {}, { 0 }, { 1 }, { 0, 2 } } do
        for _, keep in ipairs { false, true } do
          local set = function(a)
            dispatch.set_ints(a, axes, name)
            if keep then a.flags = C.TIDE_ATTR_KEEPDIMS end
          end
          if name == "any" or name == "all" then
            add(op, name .. " axes " .. #axes, { bools { 2, 3, 4 } }, set, 0)
          else
            add(op, name .. " float32 axes " .. #axes, { floats({ 2, 3, 4 }, "float32", 0.5, 1.5) }, set, 1e-5)
            add(op, name .. " int32 axes " .. #axes, { ints({ 2, 3, 4 }, "int32", -3, 4) }, set, 0)
          end
        end
      end
    elseif name == "matmul" then
      for _, dt in ipairs { "float32", "float64" } do
        add(op, "matmul " .. dt, { floats({ 4, 5 }, dt), floats({ 5, 3 }, dt) }, nil, tol_of(dt) * 10)
        add(op, "matmul batch " .. dt, { floats({ 2, 4, 5 }, dt), floats({ 5, 3 }, dt) }, nil, tol_of(dt) * 10)
        add(op, "matmul broadcast " .. dt, { floats({ 2, 1, 4, 5 }, dt), floats({ 3, 5, 3 }, dt) }, nil, tol_of(dt) * 10)
        add(op, "matmul transposed " .. dt, { floats({ 5, 4 }, dt), floats({ 3, 5 }, dt) },
          function(a) a.flags = C.TIDE_ATTR_TRANSPOSE_A + C.TIDE_ATTR_TRANSPOSE_B end, tol_of(dt) * 10)
        add(op, "matmul vector " .. dt, { floats({ 4, 5 }, dt), floats({ 5 }, dt) }, nil, tol_of(dt) * 10)
      end
    elseif RANDOM[name] then
      for _, dt in ipairs { "float32", "float64", "float16" } do
        add(op, name .. " " .. dt, {}, function(a)
          a.dtype = C["TIDE_" .. dt:upper()]
          dispatch.set_ints(a, { 7, 9 }, name)
          a.scalars[0], a.scalars[1] = name == "random_uniform" and -1 or 0, name == "random_uniform" and 3 or 1
          a.rng_key, a.rng_counter = 0x1234567890ULL, 42
        end, name == "random_uniform" and 0 or 1e-5, name == "random_uniform")
      end
      if name == "random_uniform" then
        add(op, name .. " int32", {}, function(a)
          a.dtype = C.TIDE_INT32
          dispatch.set_ints(a, { 33 }, name)
          a.scalars[0], a.scalars[1] = -7, 100
          a.rng_key, a.rng_counter = 99, 7
        end, 0, true)
      end
    elseif bit.band(flags, ELEMENTWISE) ~= 0 or name == "clip_by_value" then
      elementwise_cases(op, name, C.tide_op_num_inputs(op))
    elseif bit.band(flags, C.TIDE_OPF_VIEW) ~= 0 then
      -- views: header arithmetic on the GPU, a copy where strides forbid one
      local x = floats({ 2, 3, 4 }, "float32")
      if name == "reshape" then
        add(op, "reshape of a transposed view", { x:transpose() }, function(a) dispatch.set_ints(a, { 4, 6 }, name) end, 0)
      elseif name == "transpose" then
        add(op, "transpose", { x }, function(a) dispatch.set_ints(a, { 2, 0, 1 }, name) end, 0)
      elseif name == "slice" then
        add(op, "slice", { x }, function(a) dispatch.set_ints(a, { 0, 2, 1, 1, 3, 1, 0, 4, 2 }, name) end, 0)
      elseif name == "broadcast_to" then
        add(op, "broadcast_to", { floats({ 3, 1 }, "float32") }, function(a) dispatch.set_ints(a, { 2, 3, 4 }, name) end, 0)
      elseif name == "squeeze" then
        add(op, "squeeze", { floats({ 3, 1, 2 }, "float32") }, function(a) dispatch.set_ints(a, { 1 }, name) end, 0)
      elseif name == "expand_dims" then
        add(op, "expand_dims", { x }, function(a) a.axis = 1 end, 0)
      end
    end
    local covered = false
    for _, c in ipairs(cases) do covered = covered or c.op == op end
    if not covered then
      error("tests/spec/gpu/backend_ops_spec.lua: op " .. name .. " has a CUDA kernel but no case here: add one")
    end
  end
end

-- Run a case's op on the CPU (dispatch.run) and on the GPU (inputs moved there,
-- or the op placed there when it has none): the two CPU-side results.
local function run_both(c)
  local a = dispatch.attrs()
  if c.set_attrs then c.set_attrs(a) end
  local saved = ffi.new("tide_attrs")
  ffi.copy(saved, a, ffi.sizeof("tide_attrs"))
  local want = dispatch.run(c.op, a, c.inputs, 1)
  local got
  if #c.inputs == 0 then
    local out = binding.Tensor()
    local outs = ffi.new("tide_tensor *[1]", out)
    if C.tide_op_run_device(device.parse(GPU), c.op, saved, 0, nil, 1, outs) ~= 0 then binding.raise() end
    got = binding.finish(out)
  else
    local on_gpu = {}
    for i, t in ipairs(c.inputs) do on_gpu[i] = t:to(GPU) end
    local a2 = dispatch.attrs()
    ffi.copy(a2, saved, ffi.sizeof("tide_attrs"))
    got = dispatch.run(c.op, a2, on_gpu, 1)
    assert.are.equal(GPU, got.device)
  end
  return want, got:cpu()
end

local function close(want, got, tol)
  if type(want) == "table" then
    if type(got) ~= "table" or #want ~= #got then return false end
    for i = 1, #want do
      if not close(want[i], got[i], tol) then return false end
    end
    return true
  end
  if type(want) ~= "number" then return want == got end
  if want ~= want then return got ~= got end
  return math.abs(want - got) <= tol * math.max(1, math.abs(want))
end

local gpus = #tide.config.list_physical_devices("GPU")

if gpus == 0 then
  local reason = ffi.string(C.tide_cuda_unavailable_reason())
  print(string.format("SKIP %d: no GPU visible: the GPU checks (%s)", #cases, reason))
  describe("GPU backend ops", function() end)
  return
end

describe("GPU backend ops against the CPU", function()
  for _, c in ipairs(cases) do
    it(c.name, function()
      local want, got = run_both(c)
      assert.are.same(want.shape, got.shape)
      assert.are.equal(want.dtype, got.dtype)
      local w, g = want:totable(), got:totable()
      if c.exact then
        assert.are.same(w, g) -- the same Philox stream: the same values, bit for bit
      else
        assert.is_true(close(w, g, c.tol), c.name .. ": the GPU's values differ from the CPU's")
      end
    end)
  end
end)
