-- tests/spec/ops/keras_ops_nn_spec.lua — tide.ops' keras.ops.nn/linalg names (ops/keras_nn.lua) and the ones that
-- need tracing (tracing/keras_ops.lua): gradients, decompositions by reconstruction, control flow, errors.
-- Their values against Keras 3 are keras_ops_spec's (tests/fixtures/keras_ops/cases.json).
local tide = require "tide"
local gc = require "gradcheck"

local o = tide.ops

local function close(a, b, tol)
  local x, y = a:totable(), b:totable()
  local function walk(p, q)
    if type(p) == "table" then for i = 1, #p do walk(p[i], q[i]) end return end
    assert(math.abs(p - q) <= (tol or 1e-4), tostring(p) .. " vs " .. tostring(q))
  end
  walk(x, y)
end

describe("tide.ops nn and linalg", function()
  it("has float64 finite-difference gradients for its compositions", function()
    local x = gc.random({ 2, 3, 4 }, -2, 2, 91)
    local g, b = gc.random({ 4 }, 0.5, 1.5, 92), gc.random({ 4 }, -1, 1, 93)
    gc.check(function(a) return o.layer_normalization(a, { gamma = g, beta = b }) end, { x })
    gc.check(function(a) return o.rms_normalization(a, { scale = g }) + o.normalize(a) end, { x })
    gc.check(function(a) return o.celu(a) + o.hard_silu(a) + o.squareplus(a) + o.tanh_shrink(a) + o.soft_shrink(a)
      + o.sparse_plus(a) + o.hard_tanh(a * 0.3) end, { x })
    gc.check(function(a) return o.glu(a) end, { x }, { none = false })
    gc.check(function(a) return o.sparsemax(a) end, { x }, { none = false })
    local p = gc.random({ 3, 4 }, 0.1, 0.9, 94)
    local t = tide.tensor({ { 0, 1, 0, 0 }, { 1, 0, 0, 0 }, { 0, 0, 0, 1 } }, "float64")
    gc.check(function(a) return o.binary_crossentropy(t, a) end, { p })
    gc.check(function(a) return o.categorical_crossentropy(t, a) end, { p })
    gc.check(function(a) return o.sparse_categorical_crossentropy(tide.tensor { 1, 0, 3 }, a, { from_logits = true })
    end, { p }, { none = false })
    local q, k, v = gc.random({ 1, 3, 2, 4 }, -1, 1, 95), gc.random({ 1, 3, 2, 4 }, -1, 1, 96),
      gc.random({ 1, 3, 2, 4 }, -1, 1, 97)
    gc.check(function(a, bb, c) return o.dot_product_attention(a, bb, c, { is_causal = true }) end, { q, k, v },
      { none = false })
    local l = tide.tensor({ { 2, 0, 0 }, { 0.5, 1.5, 0 }, { 0.25, 0.1, 1.2 } }, "float64")
    gc.check(function(a) return o.cholesky_inverse(o.tril(a)) end, { l }, { none = false })
    local img, ker = gc.random({ 1, 4, 4, 2 }, -1, 1, 98), gc.random({ 2, 2, 2, 3 }, -1, 1, 99)
    gc.check(function(a, w) return o.conv(a, w, { padding = "same" }) end, { img, ker }, { none = false })
    gc.check(function(a) return o.max_pool(a, 2) + o.average_pool(a, 2) end, { img }, { none = false })
    local im5 = gc.random({ 1, 5, 7, 2 }, -1, 1, 100)
    gc.check(function(a) return o.adaptive_average_pool(a, { 2, 3 }) + o.adaptive_max_pool(a, { 2, 3 }) end, { im5 },
      { none = false })
    local chw = gc.random({ 1, 2, 4, 5 }, -1, 1, 101)
    gc.check(function(a) return o.unfold(a, 2, { padding = 1 }) end, { chw }, { none = false })
    local cols = gc.random({ 1, 8, 6 }, -1, 1, 102)
    gc.check(function(a) return o.fold(a, { 3, 4 }, 2) end, { cols }, { none = false })
    gc.check(function(a) return o.rearrange(a, "b h (w c) -> (b c) h w", { c = 2 }) end, { x }, { none = false })
  end)

  it("fold puts back what unfold cut when the blocks tile the image", function()
    local a = tide.reshape(tide.range(0, 40), { 1, 2, 4, 5 }):cast("float32")
    local back = o.fold(o.unfold(a, 2, { stride = 2, padding = { 0, 1 } }), { 4, 5 }, 2, { stride = 2, padding = { 0, 1 } })
    assert.are.same(a:totable(), back:totable())
  end)

  it("decomposes as numpy does (svd's u, s, vh; qr's modes), checked by reconstruction", function()
    local a = tide.tensor({ { 2, -1, 0 }, { 1, 3, 1 } }, "float64")
    local u, s, vh = o.svd(a, { full_matrices = false })
    close(tide.matmul(u * s:reshape { 1, 2 }, vh), a, 1e-9)
    local q, r = o.qr(tide.transpose(a))
    assert.are.same({ 3, 2 }, q.shape:as_list())
    close(tide.matmul(q, r), tide.transpose(a), 1e-9)
    local qc = o.qr(tide.transpose(a), { mode = "complete" })
    assert.are.same({ 3, 3 }, qc.shape:as_list())
    assert.are.same({ 2 }, o.svd(a, { compute_uv = false }).shape:as_list())
  end)

  it("runs keras.ops' control flow eagerly and traced", function()
    local x = tide.tensor({ 1, 2, 3 }, "float32")
    local function body(a)
      local c, ys = o.scan(function(carry, xi) return carry + xi, carry * xi end, tide.tensor(0, "float32"),
        { xs = a })
      local s = o.fori_loop(0, 3, function(i, v) return v + a[i] end, tide.tensor(0, "float32"))
      local m = o.map(function(xi) return xi * 2 end, a)
      local sw = o.switch(1, { function(z) return z end, function(z) return z * 10 end }, a)
      local acc = o.associative_scan(function(p, q2) return p + q2 end, a)
      local w = o.while_loop(function(i) return i:lt(5) end, function(i) return i + 2 end, { tide.tensor(0) })
      local cnd = o.cond(true, function() return a end, function() return -a end)
      return c, ys, s, m, sw, acc, cnd, w
    end
    local eager = { body(x) }
    assert.are.same({ 0, 2, 9 }, eager[2]:totable())
    assert.are.equal(6, eager[1]:item())
    assert.are.equal(6, eager[3]:item())
    assert.are.same({ 10, 20, 30 }, eager[5]:totable())
    assert.are.same({ 1, 3, 6 }, eager[6]:totable())
    local traced = { tide.trace(body)(x) }
    for i = 1, 7 do assert.are.same(eager[i]:totable(), traced[i]:totable(), "result " .. i) end
    -- a tensor index picks its branch when traced, too
    local f = tide.trace(function(i, a)
      return o.switch(i, { function(z) return z end, function(z) return z * 10 end }, a)
    end)
    assert.are.same({ 10, 20, 30 }, f(tide.tensor(1), x):totable())
    assert.are.same({ 1, 2, 3 }, f(tide.tensor(0), x):totable())
    -- the core helpers
    assert.are.same({ 3 }, o.shape(x))
    assert.are.equal("float32", o.dtype(x))
    assert.are.equal(3, o.size(x):item())
    assert.are.same({ 1, 2, 3 }, o.convert_to_numpy(x))
    assert.are.equal("float64", o.convert_to_tensor({ 1, 2 }, { dtype = "float64" }).dtype)
    assert.are.equal("int32", o.array({ 1, 2 }).dtype)
    assert.is_true(o.is_tensor(x))
    assert.are.equal(2, o.get_item(x, 1):item())
    assert.are.same({ 2, 3 }, o.get_item(x, { { 1, 3 } }):totable())
    assert.are.same({ 0, 0, 0 }, o.stop_gradient(x * 0):totable())
    assert.is_function(o.custom_gradient)
  end)

  it("computes jvp (forward mode, by two reverse passes) and vectorizes as numpy", function()
    local x = tide.tensor({ 0.5, 1.0, 2.0 }, "float64")
    local t = tide.tensor({ 1.0, 0.5, -1.0 }, "float64")
    local y, jt = o.jvp(function(a) return tide.sin(a) * a * a end, { x }, { t })
    local xs, ts, got, ys = x:totable(), t:totable(), jt:totable(), y:totable()
    for i = 1, 3 do
      local a = xs[i]
      assert(math.abs(got[i] - (math.cos(a) * a * a + 2 * a * math.sin(a)) * ts[i]) < 1e-12)
      assert(math.abs(ys[i] - math.sin(a) * a * a) < 1e-12)
    end
    -- several primals (the same tensor twice is two arguments), several outputs, aux
    local outs, jts, aux = o.jvp(function(a, b) return { a * b, a + b }, "aux" end, { x, x }, { t, t }, true)
    assert.are.same({ 1, 1, -4 }, jts[1]:totable())
    assert.are.same({ 2, 1, -2 }, jts[2]:totable())
    assert.are.equal("aux", aux)
    assert.are.equal(2, #outs)
    -- vectorize: elementwise over broadcast arguments, or over the loop dims of a signature
    local f = o.vectorize(function(a, b) if a:item() > b:item() then return a - b end return a + b end)
    assert.are.same({ 3, 4, 1, 2 }, f(tide.tensor { 1, 2, 3, 4 }, tide.tensor(2)):totable())
    local g = o.vectorize(function(u, v) return tide.reduce_sum(u * v) end, { signature = "(n),(n)->()" })
    assert.are.same({ 3, 14 }, g(tide.tensor { { 1, 2 }, { 3, 4 } }, tide.tensor { { 1, 1 }, { 2, 2 } }):totable())
    local h = o.vectorize(function(a, k) return a * k end, { excluded = { 2 } })
    assert.are.same({ 2, 4 }, h(tide.tensor { 1, 2 }, 2):totable())
  end)

  it("names the op and the argument in its errors", function()
    local x = tide.tensor({ { 1, 2 }, { 3, 4 } }, "float32")
    local img = tide.zeros({ 1, 4, 4, 2 })
    local cases = {
      { function() o.qr(x, { mode = "r" }) end, "qr: mode must be \"reduced\" or \"complete\", got r" },
      { function() o.cholesky_inverse(nil) end, "cholesky_inverse: x is nil" },
      { function() o.solve_triangular(nil, x) end, "solve_triangular: a is nil" },
      { function() o.lstsq(x, nil) end, "lstsq: b is nil" },
      { function() o.norm(nil) end, "norm: x is nil" },
      { function() o.conv(x, x) end, "conv: inputs must be 3-D, 4-D or 5-D" },
      { function() o.conv(img, tide.zeros { 1, 1, 2, 2 }, { padding = "causal" }) end,
        "conv: padding must be \"valid\" or \"same\", got CAUSAL" },
      { function() o.conv(img, tide.zeros { 1, 1, 2, 2 }, { data_format = "channels_first" }) end,
        "conv: data_format must be \"channels_last\"" },
      { function() o.depthwise_conv(tide.zeros { 1, 2, 2, 2, 1 }, tide.zeros { 1, 1, 1, 1, 1 }) end,
        "depthwise_conv: 3-D depthwise convolutions are not in tide" },
      { function() o.separable_conv(x, x, x) end, "depthwise_conv: inputs must be 3-D" },
      { function() o.conv_transpose(img, tide.zeros { 1, 1, 2, 2 }, { dilation_rate = 2 }) end,
        "conv_transpose: dilation_rate must be 1" },
      { function() o.max_pool(tide.zeros { 1, 2, 2, 2, 1 }, 2) end, "max_pool: 3-D pools are not in tide" },
      { function() o.average_pool(x, 2) end, "average_pool: inputs must be 3-D" },
      { function() o.depth_to_space(img, 2, { data_format = "channels_first" }) end, "depth_to_space: data_format" },
      { function() o.space_to_depth(img, 2, { data_format = "channels_first" }) end, "space_to_depth: data_format" },
      { function() o.moments(nil, { 0 }) end, "moments" },
      { function() o.batch_normalization(x, x, x, 5) end, "batch_normalization: axis 5 out of range for rank 2" },
      { function() o.layer_normalization(nil) end, "layer_normalization: x is nil" },
      { function() o.rms_normalization(nil) end, "rms_normalization: x is nil" },
      { function() o.normalize(nil) end, "normalize: x is nil" },
      { function() o.binary_crossentropy(x, nil) end, "binary_crossentropy: output is nil" },
      { function() o.categorical_crossentropy(nil, x) end, "categorical_crossentropy: target is nil" },
      { function() o.sparse_categorical_crossentropy(nil, x) end, "sparse_categorical_crossentropy: target is nil" },
      { function() o.multi_hot(x, 3, { sparse = true }) end, "multi_hot: sparse = true is not supported" },
      { function() o.multi_hot(x, "3") end, "multi_hot: num_classes must be a number" },
      { function() o.psnr(x, x, "1") end, "psnr: max_val must be a number" },
      { function() o.dot_product_attention(x, x, x) end, "dot_product_attention: query, key and value must be 4-D" },
      { function() o.leaky_relu(nil) end, "leaky_relu: x is nil" },
      { function() o.celu(nil) end, "celu: argument 1 must be a tensor or a number, got nil" },
      { function() o.glu(tide.zeros { 3 }) end, "glu: the size of axis 0 must be even, got x of shape (3,)" },
      { function() o.hard_silu(nil) end, "hard_silu: x is nil" },
      { function() o.hard_swish(nil) end, "hard_silu: x is nil" },
      { function() o.hard_tanh(nil) end, "hard_tanh: argument 1 must be a tensor or a number, got nil" },
      { function() o.hard_shrink(nil) end, "hard_shrink: argument 1 must be a tensor or a number, got nil" },
      { function() o.soft_shrink(nil) end, "soft_shrink: argument 1 must be a tensor or a number, got nil" },
      { function() o.tanh_shrink(nil) end, "tanh_shrink: argument 1 must be a tensor or a number, got nil" },
      { function() o.threshold(x, "a", 0) end, "threshold: threshold must be a number, got string" },
      { function() o.squareplus(nil) end, "squareplus: argument 1 must be a tensor or a number, got nil" },
      { function() o.sparse_plus(nil) end, "sparse_plus: argument 1 must be a tensor or a number, got nil" },
      { function() o.sparse_sigmoid(nil) end, "sparse_sigmoid: argument 1 must be a tensor or a number, got nil" },
      { function() o.sparsemax(x, { axis = 3 }) end, "sparsemax: axis 3 is out of range for x of rank 2" },
      { function() o.segment_sum(x, nil) end, "segment_sum: segment_ids is nil" },
      { function() o.segment_max(x, nil) end, "segment_max: segment_ids is nil" },
      { function() o.segment_min(x, nil) end, "segment_min: segment_ids is nil" },
      { function() o.segment_prod(x, nil) end, "segment_prod: segment_ids is nil" },
      { function() o.adaptive_average_pool(x, 2) end, "adaptive_average_pool: inputs must be 3-D, 4-D or 5-D" },
      { function() o.adaptive_max_pool(img, 0) end,
        "adaptive_max_pool: output_size must be a whole number >= 1 or one per spatial dim" },
      { function() o.adaptive_max_pool(img, 2, { data_format = "nchw" }) end,
        "adaptive_max_pool: data_format must be \"channels_last\" or \"channels_first\", got nchw" },
      { function() o.unfold(x, 2) end, "unfold: x must be 4-D [N, C, H, W], got shape (2, 2)" },
      { function() o.unfold(img, 9) end, "unfold: the kernel does not fit the padded 4x2 image" },
      { function() o.unfold(img, { 1, 2, 3 }) end, "unfold: kernel_size must be a number or a pair" },
      { function() o.fold(img, { 4, 4 }, 2) end, "fold: x must be 3-D [N, C * kh * kw, L]" },
      { function() o.fold(tide.zeros { 1, 8, 5 }, { 4, 4 }, 2, { stride = 2 }) end,
        "fold: x has shape (1, 8, 5) but the kernel and output_size need [N, C * 4, 4]" },
      { function() o.rearrange(x, "a b") end, "rearrange: pattern must be a string \"left -> right\"" },
      { function() o.rearrange(x, "a ... -> a") end, "rearrange: '...' is not supported" },
      { function() o.rearrange(x, "a b -> a") end, "rearrange: axis 'b' is on the left only" },
      { function() o.rearrange(x, "a b -> a b c") end, "rearrange: axis 'c' is on the right only" },
      { function() o.rearrange(x, "a -> a") end, "rearrange: the pattern's left side has 1 axes but the tensor has rank 2" },
      { function() o.rearrange(x, "a (b c) -> a b c") end, "rearrange: give the size of 'b' or 'c' (axes_lengths)" },
      { function() o.rearrange(x, "a (b c) -> a b c", { c = 3 }) end, "rearrange: dim 1 (2) does not split by 3" },
      { function() o.rearrange(x, "a ((b) -> a b") end, "rearrange: cannot read '((b)' in the pattern" },
      { function() o.rearrange(x, "a a -> a") end, "rearrange: axis 'a' appears twice on one side" },
      { function() o.jvp(nil, { x }, { x }) end, "jvp: fun must be a function, got nil" },
      { function() o.jvp(tide.sin, { x }, {}) end, "jvp: primals and tangents must be lists of tensors of one" },
      { function() o.jvp(tide.sin, { x }, { tide.zeros { 3 } }) end, "jvp: tangent 1 is float32 (3,) but its primal is float32 (2, 2)" },
      { function() o.vectorize(5) end, "vectorize: pyfunc must be a function, got number" },
      { function() o.vectorize(tide.sin, { signature = "n -> m" }) end, "vectorize: signature must read like" },
      { function() o.vectorize(function(a, b) return a end, { signature = "(n),(n)->()" })(x, tide.zeros { 3, 2 }) end,
        "vectorize: the arguments' loop dims differ: (2) and (3)" },
      { function() o.kaiser(4, nil) end, "kaiser: beta must be a number" },
      { function() o.hamming(2.5) end, "hamming: x must be a whole number of points" },
      { function() o.bartlett("a") end, "bartlett: x must be a whole number" },
      { function() o.blackman(nil) end, "blackman: x must be a whole number" },
      { function() o.hanning(nil) end, "hanning: x must be a whole number" },
      { function() o.fori_loop(0, 2, nil, 0) end, "fori_loop: body_fun must be a function, got nil" },
      { function() o.scan(function() end, 0) end, "scan: give xs or a length" },
      { function() o.map(function() end, tide.zeros { 0 }) end, "map: xs is empty" },
      { function() o.associative_scan(nil, x) end, "associative_scan: f must be a function" },
      { function() o.switch(0, {}) end, "switch: branches must be a non-empty list" },
      { function() o.while_loop(nil, nil, { x }) end, "while_loop: cond must be a function" },
      { function() o.cond(nil, nil, nil) end, "cond: pred is nil" },
      { function() o.convert_to_tensor(nil) end, "convert_to_tensor: x is nil" },
      { function() o.get_item(x, "a") end, "get_item: key must be an index or a slice spec table, got string" },
      { function() o.in_top_k(tide.tensor { 0 }, x, "k") end, "in_top_k" },
      { function() o.lu_factor(tide.zeros { 2, 3 }) end, "lu" },
      { function() o.eigh(tide.zeros { 2, 3 }) end, "Input matrix must be square" },
    }
    for i, c in ipairs(cases) do
      local ok, err = pcall(c[1])
      assert(not ok, "case " .. i .. " (" .. c[2] .. ") did not fail")
      assert(tostring(err):find(c[2], 1, true), "case " .. i .. ": " .. tostring(err) .. "\nwanted: " .. c[2])
    end
  end)
end)
