-- The op registry as a whole: every row is reachable from Lua and runs, and
-- every op refuses a dtype outside its signature with a message naming it.
local tide = require "tide"
local binding = require "tide.binding"
local h = require "helpers"
local ffi, C = binding.ffi, binding.C

local f32 = function(v) return tide.tensor(v, "float32") end
local m = f32{{1, 2, 3}, {4, 5, 6}}
local ints = tide.tensor{{1, 2, 3}, {4, 5, 6}}

-- One call per registry row, through the public Lua API.
local calls = {
  gelu = function() return tide.nn.gelu(m) end, leaky_relu = function() return tide.nn.leaky_relu(m) end,
  celu = function() return tide.activations.celu(m, 2) end,
  hard_shrink = function() return tide.activations.hard_shrink(m, 2) end,
  soft_shrink = function() return tide.activations.soft_shrink(m, 2) end,
  squareplus = function() return tide.activations.squareplus(m) end,
  cast = function() return m:cast("int32") end, copy = function() return tide.contiguous(m:transpose()) end,
  where = function() return tide.where(m:gt(2), m, 0) end,
  clip_by_value = function() return tide.clip_by_value(m, 2, 4) end,
  sum = function() return tide.reduce_sum(m, 0) end, mean = function() return tide.reduce_mean(m, 1) end,
  max = function() return tide.reduce_max(m) end, min = function() return tide.reduce_min(m) end,
  prod = function() return tide.reduce_prod(m) end, any = function() return tide.reduce_any(m:gt(2)) end,
  all = function() return tide.reduce_all(m:gt(2)) end, argmax = function() return tide.argmax(m, 1) end,
  argmin = function() return tide.argmin(m, 1) end, cumsum = function() return tide.cumsum(m, 1) end,
  cumprod = function() return tide.cumprod(m, 1) end, sort = function() return tide.sort(m) end,
  argsort = function() return tide.argsort(m) end, top_k = function() return tide.top_k(m, 2) end,
  matmul = function() return tide.matmul(m, m:transpose()) end,
  reshape = function() return m:reshape{3, 2} end, transpose = function() return m:transpose() end,
  slice = function() return m:slice{{}, {1, 3}} end, broadcast_to = function() return tide.broadcast_to(m, {2, 2, 3}) end,
  squeeze = function() return tide.squeeze(m:reshape{1, 6}) end, expand_dims = function() return tide.expand_dims(m, 0) end,
  concat = function() return tide.concat({m, m}, 0) end, tile = function() return tide.tile(m, {2, 1}) end,
  pad = function() return tide.pad(m, {{1, 1}, {0, 0}}) end, gather = function() return tide.gather(m, {1, 0}) end,
  one_hot = function() return tide.one_hot(tide.tensor{0, 2}, 3) end, reverse = function() return tide.reverse(m, {1}) end,
  bitcast = function() return tide.bitcast(m, "uint8") end,
  shape = function() return tide.shape(m) end, size = function() return tide.num_elements(m) end,
  fill = function() return tide.fill({2, 2}, 7) end, range = function() return tide.range(5) end,
  range_dynamic = function() return tide.trace(function(n) return tide.range(n) end)(tide.tensor(5)) end,
  linspace = function() return tide.linspace(0, 1, 5) end, eye = function() return tide.eye(3) end,
  random_uniform = function() return tide.random.uniform({4}) end,
  random_normal = function() return tide.random.normal({4}) end,
  truncated_normal = function() return tide.random.truncated_normal({4}) end,
  random_shuffle = function() return tide.random.shuffle(ints) end,
  scatter_add = function() return tide.scatter_add(m, { 1, 1 }, m) end,
  slice_update = function() return tide.slice_update(m, {0}, {7, 8, 9}) end,
  cumulative_logsumexp = function() return tide.cumulative_logsumexp(m, 1) end,
  softmax = function() return tide.nn.softmax(m) end, log_softmax = function() return tide.nn.log_softmax(m, 0) end,
  sparse_softmax_cross_entropy = function() return tide.nn.sparse_softmax_cross_entropy_with_logits({2, 0}, m) end,
  betainc = function() return tide.math.betainc(tide.tensor{1.5, 2}, 2, tide.tensor{0.3, 0.6}) end,
  ctc_loss = function()
    return tide.nn.ctc_loss(tide.tensor{{1, 2}}, tide.zeros{3, 1, 4}, tide.tensor{2}, tide.tensor{3})
  end,
  gather_nd = function() return tide.gather_nd(m, {{1, 2}, {0, 0}}) end,
  tensor_scatter_nd_add = function() return tide.tensor_scatter_nd_add(m, {{1, 2}}, {5}) end,
  tensor_scatter_nd_update = function() return tide.tensor_scatter_nd_update(m, {{0}}, {{7, 8, 9}}) end,
  where_indices = function() return tide.where(m:gt(2)) end,
  unique = function() return tide.unique(tide.tensor{3, 1, 3}) end,
  segment_sum = function() return tide.segment_sum(m, {0, 0}) end,
  segment_mean = function() return tide.segment_mean(m, {0, 1}) end,
  segment_max = function() return tide.segment_max(m, {0, 0}) end,
  segment_min = function() return tide.segment_min(m, {1, 1}) end,
  segment_prod = function() return tide.segment_prod(m, {0, 2}) end,
  unsorted_segment_sum = function() return tide.unsorted_segment_sum(m, {1, 0}, 2) end,
  unsorted_segment_max = function() return tide.unsorted_segment_max(m, {1, 1}, 3) end,
  unsorted_segment_min = function() return tide.unsorted_segment_min(m, {0, -1}, 1) end,
  unsorted_segment_prod = function() return tide.unsorted_segment_prod(m, {0, 0}, 1) end,
}

-- The plain elementwise ops (tide.ops.plain finds them in the registry): each
-- through its public Lua function, on a tensor of a dtype the op accepts.
local plain = require "tide.ops.plain"
do
  local operands = { { "float32", m }, { "int32", ints }, { "bool", m:gt(2) } }
  for _, e in ipairs(plain.list) do
    local x
    for _, o in ipairs(operands) do
      if not x and bit.band(C.tide_op_dtypes(e.op), bit.lshift(1, C["TIDE_" .. o[1]:upper()])) ~= 0 then x = o[2] end
    end
    assert(x, e.name .. ": takes none of float32, int32, bool: give it a call of its own here")
    calls[e.name] = function()
      local f = plain.public(tide, e)
      assert(type(f) == "function", "plain op '" .. e.name .. "' has no Lua function " .. e.lua .. " (tide.ops.plain)")
      if e.nin == 1 then return f(x) end
      return f(x, x)
    end
  end
end

-- Convolutions and pooling (tide.ops.nn_conv; tide.nn.* exports them).
do
  local nn = require "tide.ops.nn_conv"
  local img, filt = tide.ones { 1, 4, 4, 2 }, tide.ones { 3, 3, 2, 3 }
  local dy = tide.ones { 1, 4, 4, 3 }
  calls.conv2d = function() return nn.conv2d(img, filt) end
  calls.conv2d_backprop_input = function() return nn.conv2d_backprop_input({ 1, 4, 4, 2 }, filt, dy) end
  calls.conv2d_backprop_filter = function() return nn.conv2d_backprop_filter(img, { 3, 3, 2, 3 }, dy) end
  local dwf, dwy = tide.ones { 3, 3, 2, 2 }, tide.ones { 1, 4, 4, 4 }
  calls.depthwise_conv2d = function() return nn.depthwise_conv2d(img, dwf) end
  calls.depthwise_conv2d_backprop_input = function()
    return nn.depthwise_conv2d_backprop_input({ 1, 4, 4, 2 }, dwf, dwy)
  end
  calls.depthwise_conv2d_backprop_filter = function()
    return nn.depthwise_conv2d_backprop_filter(img, { 3, 3, 2, 2 }, dwy)
  end
  calls.max_pool2d = function() return nn.max_pool2d(img, 2) end
  calls.avg_pool2d = function() return nn.avg_pool2d(img, 2) end
  local function pool_attrs() -- 2x2 windows, stride 2, VALID
    local a = ffi.new("tide_attrs")
    a.ints[0], a.ints[1], a.ints[2], a.ints[3], a.nints = 2, 2, 2, 2, 4
    return a
  end
  calls.max_pool2d_grad = function()
    return nn.raw.run(C.TIDE_OP_MAX_POOL2D_GRAD, pool_attrs(), { img, nn.max_pool2d(img, 2), tide.ones { 1, 2, 2, 2 } })
  end
  calls.max_pool2d_grad_grad = function()
    return nn.raw.run(C.TIDE_OP_MAX_POOL2D_GRAD_GRAD, pool_attrs(), { img, nn.max_pool2d(img, 2), img })
  end
  calls.avg_pool2d_grad = function()
    return nn.raw.run(C.TIDE_OP_AVG_POOL2D_GRAD, pool_attrs(), { img, tide.ones { 1, 2, 2, 2 } })
  end
end

-- tide.strings (split of a scalar gives a tensor; of a vector a RaggedTensor).
do
  local S, words = tide.strings, tide.tensor { "a B", " c " }
  calls.string_lower = function() return S.lower(words) end
  calls.string_upper = function() return S.upper(words) end
  calls.string_strip = function() return S.strip(words) end
  calls.string_length = function() return S.length(words) end
  calls.string_to_number = function() return S.to_number(tide.tensor { "1", "2.5" }) end
  calls.as_string = function() return S.as_string(m) end
  calls.string_join = function() return S.join({ words, "!" }) end
  calls.string_format = function() return S.format("{} and {}", { words, m }) end
  calls.reduce_join = function() return S.reduce_join(words) end
  calls.substr = function() return S.substr(words, 0, 1) end
  calls.regex_replace = function() return S.regex_replace(words, "[a-z]", "x") end
  calls.string_split = function() return S.split(tide.tensor "a b") end
  calls.string_hash = function() return S.to_hash_bucket_fast(words, 10) end
  calls.fingerprint = function() return tide.fingerprint(words) end
  calls.string_ngrams = function() return S.ngrams(tide.tensor { "a", "b", "c" }, 2) end
  calls.unicode_decode = function() return S.unicode_decode(words, "UTF-8").values end
  calls.unicode_encode = function() return S.unicode_encode(tide.tensor { 104, 105 }, "UTF-8") end
  calls.unicode_script = function() return S.unicode_script(tide.tensor { 104, 1084 }) end
  calls.regex_full_match = function() return S.regex_full_match(words, "[a-z ]+") end
  calls.unsorted_segment_join = function() return S.unsorted_segment_join(words, tide.tensor { 1, 0 }, 2) end
  calls.cross_hashed = function()
    return tide.sparse.cross_hashed({ tide.tensor { { "a" }, { "b" } }, tide.tensor({ { 1 }, { 2 } }, "int64") }).values
  end
end

-- tide.lookup and TextVectorization's token ops.
do
  local LK = tide.lookup
  local NG = require "tide.layers.preprocessing.text_ngrams"
  local v = tide.tensor { "a", "b" }
  calls.lookup_table = function() return LK.table(v) end
  calls.lookup_find = function() return LK.find(tide.tensor { "b", "z" }, v, LK.table(v), { first = 1, num_oov = 1 }) end
  calls.ragged_to_tensor = function() return LK.ragged_to_tensor(v, tide.tensor({ 0, 1, 2 }, "int64"), "") end
  calls.text_ngrams = function() return NG.ngrams(v, tide.tensor({ 0, 2 }, "int64"), { 2 }) end
  calls.text_chars = function() return NG.characters(tide.tensor { "ab" }) end
  calls.wordpiece_tokenize = function()
    return tide.text.WordPieceTokenizer { vocabulary = { "[UNK]", "a", "##b" } }:tokenize(tide.tensor "ab")
  end
  local bpe = tide.text.BytePairTokenizer { vocabulary = { a = 0, b = 1, ab = 2 }, merges = { "a b" } }
  calls.bpe_tokenize = function() return bpe:tokenize(tide.tensor "ab") end
  calls.bpe_bytes_decode = function() return bpe:detokenize({ 2, 0 }) end
end

-- assert: tide.debugging's assertions (tests/spec/debugging covers them in full).
calls.assert = function() return tide.debugging.check_numerics(m, "finite") end

-- tide.io's Example parsing: one op per feature.
do
  local rec = tide.io.serialize_example { a = { int64_list = { 1, 2 } } }
  calls.parse_example_dense = function() return tide.io.parse_single_example(rec, { a = tide.io.FixedLenFeature({ 2 }, "int64") }).a end
  calls.parse_example_sparse = function() return tide.io.parse_example({ rec }, { a = tide.io.VarLenFeature("int64") }).a.values end
end

-- all_reduce_sum: tide.distribute's collective (loading it registers the gradient; a world of one here).
do
  local D = tide.distribute
  calls.all_reduce_sum = function() return D.all_reduce_sum(m) end
end

-- tide.linalg (tests/spec/linalg covers it in full).
do
  local L = tide.linalg
  local sq = f32{{4, 1, 2}, {1, 5, 3}, {2, 3, 6}}
  calls.matrix_transpose = function() return L.matrix_transpose(m) end
  calls.matrix_band_part = function() return L.band_part(m, 0, -1) end
  calls.matrix_diag = function() return L.diag(f32{1, 2}) end
  calls.matrix_diag_part = function() return L.diag_part(m) end
  calls.matrix_set_diag = function() return L.set_diag(m, f32{7, 8}) end
  calls.cholesky = function() return L.cholesky(sq) end
  calls.matrix_inverse = function() return L.inv(sq) end
  calls.matrix_determinant = function() return L.det(sq) end
  calls.log_matrix_determinant = function() return (L.slogdet(sq)) end
  calls.lu = function() return (L.lu(sq)) end
  calls.matrix_solve = function() return L.solve(sq, m:transpose()) end
  calls.matrix_triangular_solve = function() return L.triangular_solve(sq, m:transpose()) end
  calls.matrix_solve_ls = function() return L.lstsq(m:transpose(), f32{{1}, {2}, {3}}) end
  calls.qr = function() return (L.qr(m)) end
  calls.svd = function() return (L.svd(m)) end
  calls.self_adjoint_eig = function() return (L.eigh(sq)) end
  calls.fft = function() return tide.signal.fft({ real = m, imag = m }).real end
  calls.ifft = function() return tide.signal.ifft({ real = m, imag = m }).real end
  calls.rfft = function() return tide.signal.rfft(m).imag end
  calls.irfft = function() return tide.signal.irfft { real = m, imag = m } end
  calls.eig = function() return L.eigvals(sq).real end
  calls.matrix_exponential = function() return L.expm(sq * 0.1) end
  calls.matrix_square_root = function() return L.sqrtm(sq) end
  calls.tridiagonal_solve = function() return L.tridiagonal_solve(sq, m:transpose()) end
end

-- sum_to has no public entry: gradients run it (tide.grad.util's unbroadcast with None dims).
calls.sum_to = function()
  local a = ffi.new("tide_attrs")
  a.ints[0], a.nints = 3, 1
  return require("tide.dispatch").run_view(C.TIDE_OP_SUM_TO, a, m)
end

-- tide.image's ops (tests/spec/image covers them in full).
do
  local png = tide.image.encode_png_tensor(tide.zeros({ 2, 3, 1 }, "uint8"))
  local f = assert(io.open("tests/fixtures/images/gray.jpg", "rb"))
  local jpg = f:read("a")
  f:close()
  local img = tide.ones { 1, 4, 4, 2 }
  local function grad_op(op)
    return function()
      local a = ffi.new("tide_attrs")
      a.dtype = C.TIDE_FLOAT32
      return require("tide.dispatch").run(op, a, { tide.ones { 1, 2, 3, 2 }, img })
    end
  end
  calls.decode_png = function() return tide.image.decode_png(png) end
  calls.decode_image = function()
    return tide.image.decode_image(tide.tensor(jpg, "string"), { expand_animations = false })
  end
  calls.read_file = function() return tide.io.read_file("tests/fixtures/images/rgb24.bmp") end
  calls.decode_jpeg = function() return tide.image.decode_jpeg(jpg) end
  calls.decode_bmp = function()
    local f = assert(io.open("tests/fixtures/images/rgb24.bmp", "rb"))
    local s = f:read("a")
    f:close()
    return tide.image.decode_bmp(s)
  end
  calls.decode_wav = function()
    local f = assert(io.open("tests/fixtures/keras_utils/audio_decode/stereo.wav", "rb"))
    local s = f:read("a")
    f:close()
    return tide.audio.decode_wav(s)
  end
  local function fixture(name)
    local f = assert(io.open("tests/fixtures/images/" .. name, "rb"))
    local s = f:read("a")
    f:close()
    return s
  end
  calls.decode_gif = function() return tide.image.decode_gif(fixture("still.gif")) end
  calls.decode_webp = function() return tide.image.decode_webp(fixture("rgb.webp")) end
  calls.decode_jxl = function() return tide.image.decode_jxl(fixture("rgb.jxl")) end
  calls.encode_png = function() return tide.image.encode_png_tensor(tide.zeros({ 2, 2, 3 }, "uint8")) end
  calls.resize_bilinear = function() return tide.image.resize(img, { 2, 3 }) end
  calls.resize_nearest = function() return tide.image.resize(img, { 2, 3 }, { method = "nearest" }) end
  calls.resize_bilinear_grad = grad_op(C.TIDE_OP_RESIZE_BILINEAR_GRAD)
  calls.resize_nearest_grad = grad_op(C.TIDE_OP_RESIZE_NEAREST_GRAD)
  local boxes = tide.tensor({ { 0, 0, 1, 1 }, { 0, 0.1, 1, 1.1 } }, "float32")
  calls.non_max_suppression = function() return tide.image.non_max_suppression(boxes, { 0.9, 0.8 }, 2) end
  calls.non_max_suppression_overlaps = function()
    return tide.image.non_max_suppression_overlaps(tide.eye(2), { 0.9, 0.8 }, 2)
  end
  calls.combined_non_max_suppression = function()
    return tide.image.combined_non_max_suppression(boxes:reshape { 1, 2, 1, 4 }, tide.ones { 1, 2, 3 }, 2, 3)[1]
  end
  calls.draw_bounding_boxes = function() return tide.image.draw_bounding_boxes(img:slice { {}, {}, {}, { 0, 1 } }, boxes:reshape { 1, 2, 4 }) end
  calls.encode_jpeg = function() return tide.image.encode_jpeg_tensor(tide.zeros({ 2, 2, 3 }, "uint8")) end
  calls.stateless_random_uniform = function() return tide.random.stateless_uniform({ 3 }, { 1, 2 }) end
  calls.sample_distorted_bounding_box = function()
    return tide.image.sample_distorted_bounding_box({ 10, 10, 3 }, boxes:reshape { 1, 2, 4 }:clip_by_value(0, 1))
  end
  calls.stateless_sample_distorted_bounding_box = function()
    return tide.image.stateless_sample_distorted_bounding_box({ 10, 10, 3 }, boxes:reshape { 1, 2, 4 }:clip_by_value(0, 1), { 1, 2 })
  end
end

describe("the op registry", function()
  local nops = tonumber(C.TIDE_NUM_OPS)

  it("has unique names that look up to their codes", function()
    local seen = {}
    for op = 0, nops - 1 do
      local name = ffi.string(C.tide_op_name(op))
      assert.is_nil(seen[name], "duplicate op name " .. name)
      seen[name] = true
      assert.are.equal(op, C.tide_op_lookup(name))
    end
    assert.are.equal(-1, C.tide_op_lookup("no_such_op"))
  end)

  it("reaches every op from Lua, and each one runs", function()
    for op = 0, nops - 1 do
      local name = ffi.string(C.tide_op_name(op))
      local call = calls[name]
      assert.is_not_nil(call, "no Lua call covers registry op '" .. name .. "'")
      local r = call()
      assert.is_true(tide.is_tensor(r), name .. " did not return a tensor")
    end
  end)

  it("names every plain elementwise op in Lua from the registry (tide.ops.plain)", function()
    local methods = binding.methods
    local n = 0
    for op = 0, nops - 1 do
      local name = ffi.string(C.tide_op_name(op))
      local e = plain.ops[name]
      local elementwise = bit.band(C.tide_op_flags(op), C.TIDE_OPF_ELEMENTWISE) ~= 0
      local nin = C.tide_op_num_inputs(op)
      if elementwise and (nin == 1 or nin == 2) and C.tide_op_num_outputs(op) == 1 then
        assert(e or plain.OWN[name], "elementwise op '" .. name .. "' is neither plain nor in tide.ops.plain's OWN")
      else
        assert.is_nil(e, name .. " is not a plain op")
      end
      if e then
        n = n + 1
        if e.family ~= "math" then -- tide.bitwise, tide.math.special, tide.raw_ops: there only
          local where = "tide." .. table.concat(plain.PATH[e.family], ".") .. "." .. e.lua
          assert.is_function(plain.public(tide, e), where)
          assert.is_nil(rawget(tide, e.lua), "tide." .. e.lua .. " (only " .. where .. ")")
          assert.is_nil(rawget(tide.math, e.lua), "tide.math." .. e.lua .. " (only " .. where .. ")")
        else
          assert.is_function(tide[e.lua], "tide." .. e.lua)
          assert.are.equal(tide[e.lua], tide.math[e.lua], "tide.math." .. e.lua)
          assert.are.equal(tide[e.lua], methods[e.lua], "method " .. e.lua)
        end
      end
    end
    assert.is_true(n >= 60, "only " .. n .. " plain ops")
    assert.are.equal(tide.divide_no_nan, tide.div_no_nan)
  end)

  it("has a gradient for every op not flagged TIDE_OPF_NO_GRAD", function()
    require "tide.grad" -- the families fill the registry when loaded (the tape loads them at its first gradient)
    local grads = require("tide.grad.registry").fns
    for op = 0, nops - 1 do
      local name = ffi.string(C.tide_op_name(op))
      local nograd = bit.band(C.tide_op_flags(op), C.TIDE_OPF_NO_GRAD) ~= 0
      if not nograd then
        assert.is_not_nil(grads[op], "op '" .. name .. "' has no gradient (register one in stdlib/tide/grad/)")
      end
    end
  end)

  -- grad/X.lua holds the gradients of the ops whose Lua functions ops/X.lua
  -- (or X.lua: tensor.lua, image.lua) defines; an op run by a module above
  -- the autodiff floor (tide.distribute's all_reduce_sum) registers its
  -- gradient beside its function. The op's home is found by running its call
  -- above: the innermost library function active when the tape recorder is
  -- handed the op (a dispatch.lua runner counts as the ops/ module that
  -- exports it: tide.ops.plain's ops are ops/math.lua's). A call hook keeps
  -- the functions active at each stack depth, since a tail call
  -- (`return dispatch.run1(...)`) leaves its caller's frame off the stack.
  it("registers each op's gradient in the grad/X.lua of the ops/X.lua that runs it", function()
    require "tide.grad"
    local reg = require "tide.grad.registry"
    local recorder = require "tide.tape_recorder"
    -- Ops that only gradients run (their calls above run them raw): their
    -- own gradient sits beside their forward op's.
    local GRADIENT_ONLY = {
      sum_to = "grad/shape.lua", resize_bilinear_grad = "grad/image.lua", resize_nearest_grad = "grad/image.lua",
    }
    local getinfo = debug.getinfo
    local function lib_file(source) return source and source:match("stdlib/tide/(.*)$") end
    local exported = {} -- a dispatch.lua runner -> the ops/ module file that exports it
    for modname, mod in pairs(package.loaded) do
      if type(mod) == "table" and modname:match("^tide%.ops%.") then
        local file = "ops/" .. modname:sub(#"tide.ops." + 1) .. ".lua"
        for k, v in pairs(mod) do
          if type(v) == "function" and lib_file(getinfo(v, "S").source) == "dispatch.lua" then
            assert(exported[v] == nil or exported[v] == file, k .. " is exported by " .. tostring(exported[v]) ..
              " and " .. file .. ": its op's home is ambiguous")
            exported[v] = file
          end
        end
      end
    end
    -- The home a function gives an op it runs, or nil.
    local function home_of_fn(f)
      local file = lib_file(getinfo(f, "S").source)
      if file == "dispatch.lua" then return exported[f] end
      if file ~= "tape_recorder.lua" then return file end
    end
    local function depth() -- of the hook's caller's caller
      local d = 3
      while getinfo(d, "l") do d = d + 1 end
      return d
    end
    -- chains[d]: the Lua functions active at depth d, a tail call appended to
    -- its caller. A C function sends no return event: none is kept, and one
    -- tail-called ends the chain it replaces.
    local chains, top = {}, 0
    local function hook(event)
      local d = depth()
      local info = getinfo(2, "Sf")
      if event == "call" then
        for k = d + 1, top do chains[k] = nil end
        top = d
        if info.what == "C" then chains[d] = nil
        elseif chains[d] then chains[d][#chains[d] + 1] = info.func
        else chains[d] = { info.func } end
      else
        for k = d, top do chains[k] = nil end
        top = d - 1
      end
    end
    local function home_now()
      for d = top, 1, -1 do
        local chain = chains[d]
        for i = chain and #chain or 0, 1, -1 do
          local home = home_of_fn(chain[i])
          if home then return home end
        end
      end
    end
    local function home_of(op, call)
      local saved = { recorder.active, recorder.any_wanted, recorder.op, recorder.op1, recorder.op2 }
      local home, seen
      local function spy(code) if code == op and not seen then seen, home = true, home_now() end end
      recorder.active, recorder.any_wanted = true, function() return true end
      recorder.op, recorder.op1, recorder.op2 = spy, spy, spy
      chains, top = {}, 0
      local jit_on = jit.status()
      jit.flush()
      jit.off() -- compiled code calls no hooks
      debug.sethook(hook, "cr")
      local ok, err = pcall(call)
      debug.sethook()
      if jit_on then jit.on() end
      recorder.active, recorder.any_wanted, recorder.op, recorder.op1, recorder.op2 = unpack(saved, 1, 5)
      assert(ok, tostring(err))
      return seen, home
    end
    local checked, wrong = 0, {}
    for op = 0, nops - 1 do
      local name = ffi.string(C.tide_op_name(op))
      local file = reg.files[op] and lib_file(reg.files[op])
      if file then
        local seen, home = home_of(op, calls[name])
        assert(seen, name .. ": its call above never ran the op")
        local want
        if home then
          assert(not GRADIENT_ONLY[name], name .. " is run by " .. home .. ": drop it from GRADIENT_ONLY")
          local family = home:match("^ops/(.*)$") or (not home:find("/", 1, true) and home)
          want = family and "grad/" .. family or home
        else
          want = GRADIENT_ONLY[name]
          assert(want, "no library function runs op '" .. name .. "' (its gradient is in " .. file ..
            "): give it a call through its Lua function, or list it in GRADIENT_ONLY")
        end
        if file ~= want then
          wrong[#wrong + 1] = string.format("op '%s': its gradient is registered in stdlib/tide/%s, but its Lua " ..
            "function is in stdlib/tide/%s: register it in stdlib/tide/%s", name, file, home or "(none)", want)
        end
        checked = checked + 1
      end
    end
    assert(#wrong == 0, #wrong .. " gradients out of place:\n" .. table.concat(wrong, "\n"))
    assert.is_true(checked > 80, "only " .. checked .. " gradients checked")
  end)

  it("rejects a dtype outside each op's signature, naming the op", function()
    local bool = tide.tensor{true, false}
    local word = ffi.new("const tide_tensor *[3]")
    local out = ffi.new("tide_tensor[4]") -- the most outputs an op of 1 or 2 inputs has (eig)
    local outs = ffi.new("tide_tensor *[4]", out, out + 1, out + 2, out + 3)
    local checked = 0
    for op = 0, nops - 1 do
      local nin = C.tide_op_num_inputs(op)
      local mask = C.tide_op_dtypes(op)
      local name = ffi.string(C.tide_op_name(op))
      if nin >= 1 and nin <= 2 and bit.band(mask, bit.lshift(1, C.TIDE_BOOL)) == 0 then
        for i = 0, nin - 1 do word[i] = bool end
        local attrs = ffi.new("tide_attrs")
        attrs.dtype = C.TIDE_INT32
        attrs.n = 1
        local rc = C.tide_op_run(op, attrs, nin, word, C.tide_op_num_outputs(op), outs)
        assert.are_not.equal(0, rc, name .. " accepted a bool input")
        local msg = ffi.string(C.tide_last_error())
        assert.truthy(msg:find(name, 1, true), name .. ": message does not name the op: " .. msg)
        checked = checked + 1
      end
    end
    assert.is_true(checked > 40)
    h.errors("must be", function() return tide.exp(bool) end)
  end)
end)
