-- matmul: hand-computed products, batch broadcasting, 1-D operands, transposes
-- as flags and as strided views, every dtype family, and errors.
local tide = require "tide"
local h = require "helpers"
local binding = require "tide.binding"
local dispatch = require "tide.dispatch"
local C = binding.C

local A = {{1, 2, 3}, {4, 5, 6}}             -- 2x3
local B = {{7, 8}, {9, 10}, {11, 12}}        -- 3x2
local AB = {{58, 64}, {139, 154}}

local function f32(v) return tide.tensor(v, "float32") end
local function f64(v) return tide.tensor(v, "float64") end

-- A transposed view (no copy): perm reverses the dims unless given.
local function T(x, perm)
  local a = dispatch.attrs()
  if perm then dispatch.set_ints(a, perm, "transpose") end
  return dispatch.run_view(C.TIDE_OP_TRANSPOSE, a, x)
end

-- The same matrix materialized through a broadcast view (stride 0).
local function broadcast(x, shape)
  local a = dispatch.attrs()
  dispatch.set_ints(a, shape, "broadcast_to")
  return dispatch.run_view(C.TIDE_OP_BROADCAST_TO, a, x)
end

-- Reference product of nested Lua tables (2-D).
local function ref(a, b)
  local out = {}
  for i = 1, #a do
    out[i] = {}
    for j = 1, #b[1] do
      local s = 0
      for k = 1, #b do s = s + a[i][k] * b[k][j] end
      out[i][j] = s
    end
  end
  return out
end

-- A rows x cols table of small deterministic values.
local function mat(rows, cols, seed)
  local out = {}
  for i = 1, rows do
    out[i] = {}
    for j = 1, cols do out[i][j] = ((i * 7 + j * 3 + seed * 11) % 13 - 6) / 4 end
  end
  return out
end

describe("matmul", function()
  it("multiplies matrices", function()
    local c = tide.matmul(f32(A), f32(B))
    assert.are.same({2, 2}, c.shape)
    assert.are.equal("float32", c.dtype)
    assert.are.same(AB, c:totable())
    assert.are.same(AB, f32(A):matmul(f32(B)):totable())
    assert.are.same(AB, tide.linalg.matmul(f64(A), f64(B)):totable())
  end)

  it("takes Lua tables in the other operand's dtype", function()
    local c = tide.matmul(f64(A), B)
    assert.are.equal("float64", c.dtype)
    assert.are.same(AB, c:totable())
    assert.are.same(AB, tide.matmul(A, B):totable())
    assert.are.equal("int32", tide.matmul(A, B).dtype)
  end)

  it("matches a reference on larger float64 products (BLAS path)", function()
    local a, b = mat(37, 29, 1), mat(29, 23, 2)
    h.close(tide.matmul(f64(a), f64(b)), ref(a, b), 1e-12)
    h.close(tide.matmul(f32(a), f32(b)), ref(a, b), 1e-5)
  end)

  it("applies transpose flags", function()
    assert.are.same({{14, 32}, {32, 77}}, tide.matmul(f32(A), f32(A), {transpose_b = true}):totable())
    assert.are.same({{17, 22, 27}, {22, 29, 36}, {27, 36, 45}},
      tide.matmul(f32(A), f32(A), true):totable())
    -- B^T A^T = (AB)^T
    assert.are.same({{58, 139}, {64, 154}},
      tide.matmul(f32(B), f32(A), {transpose_a = true, transpose_b = true}):totable())
    assert.are.same({{58, 139}, {64, 154}}, tide.matmul(B, A, {adjoint_a = true, adjoint_b = true}):totable())
    assert.are.same(AB, tide.matmul(tide.tensor(A), tide.tensor(B), false, false):totable())
  end)

  it("reads transposed views without copying them first", function()
    local At = f32{{1, 4}, {2, 5}, {3, 6}}   -- A^T stored
    local Bt = f32{{7, 9, 11}, {8, 10, 12}}  -- B^T stored
    assert.are.same(AB, tide.matmul(T(At), f32(B)):totable())
    assert.are.same(AB, tide.matmul(f32(A), T(Bt)):totable())
    assert.are.same(AB, tide.matmul(T(At), T(Bt)):totable())
    -- a view and a flag cancel out
    assert.are.same(AB, tide.matmul(T(f32(A)), f32(B), {transpose_a = true}):totable())
    -- float64 and int views too
    assert.are.same(AB, tide.matmul(T(f64{{1, 4}, {2, 5}, {3, 6}}), T(f64{{7, 9, 11}, {8, 10, 12}})):totable())
    assert.are.same(AB, tide.matmul(T(tide.tensor{{1, 4}, {2, 5}, {3, 6}}), tide.tensor(B)):totable())
  end)

  it("handles sliced, reversed and broadcast views", function()
    local wide = f32{{1, 0, 2, 0, 3, 0}, {4, 0, 5, 0, 6, 0}}
    local a = wide:slice{{}, {0, 6, 2}}          -- column stride 2: copied
    assert.are.same({2, 3}, a.shape)
    assert.are.same(AB, tide.matmul(a, f32(B)):totable())
    local rev = f32{{3, 2, 1}, {6, 5, 4}}:slice{{}, {nil, nil, -1}}  -- negative stride
    assert.are.same(AB, tide.matmul(rev, f32(B)):totable())
    local rows = f32{{1, 2, 3}, {9, 9, 9}, {4, 5, 6}}:slice{{0, 3, 2}}  -- row stride 6
    assert.are.same(AB, tide.matmul(rows, f32(B)):totable())
    local ones = broadcast(f32{{1, 1, 1}}, {2, 3})  -- row stride 0
    assert.are.same({{27, 30}, {27, 30}}, tide.matmul(ones, f32(B)):totable())
    local ints = tide.tensor{{3, 2, 1}, {6, 5, 4}}:slice{{}, {nil, nil, -1}}
    assert.are.same(AB, tide.matmul(ints, tide.tensor(B)):totable())
  end)

  it("broadcasts batch dims as numpy does", function()
    local a = f32{A, {{1, 0, 0}, {0, 1, 0}}}       -- [2, 2, 3]
    local c = tide.matmul(a, f32(B))                -- [2, 2, 3] @ [3, 2]
    assert.are.same({2, 2, 2}, c.shape)
    assert.are.same({AB, {{7, 8}, {9, 10}}}, c:totable())
    local b3 = f32{B, {{1, 0}, {0, 1}, {0, 0}}, {{0, 0}, {0, 0}, {1, 1}}}  -- [3, 3, 2]
    local d = tide.matmul(f32{A}, b3)               -- [1, 2, 3] @ [3, 3, 2]
    assert.are.same({3, 2, 2}, d.shape)
    assert.are.same({AB, {{1, 2}, {4, 5}}, {{3, 3}, {6, 6}}}, d:totable())
    local e = tide.matmul(f32{{A}, {A}}, b3)        -- [2, 1, 2, 3] @ [3, 3, 2]
    assert.are.same({2, 3, 2, 2}, e.shape)
    assert.are.same(d:totable(), e:totable()[1])
    assert.are.same(d:totable(), e:totable()[2])
    local f = tide.matmul(f32(A), b3)               -- [2, 3] @ [3, 3, 2]
    assert.are.same(d:totable(), f:totable())
  end)

  it("stacks batches of a over a shared b into one product", function()
    local a = {}
    for i = 1, 4 do a[i] = mat(3, 5, i) end
    local b = mat(5, 2, 9)
    local c = tide.matmul(f64(a), f64(b)):totable()
    for i = 1, 4 do h.close(c[i], ref(a[i], b), 1e-12) end
    -- the same through a view whose batches do not stack
    local ta = T(f64(a), {1, 0, 2})                 -- [3, 4, 5] viewed, batch stride 5
    local ct = tide.matmul(ta, f64(b)):totable()
    for j = 1, 3 do
      for i = 1, 4 do h.close(ct[j][i], ref({a[i][j]}, b)[1], 1e-12) end
    end
  end)

  it("runs many small batched products (over the pool) like single ones", function()
    local a, b = {}, {}
    for i = 1, 40 do a[i], b[i] = mat(6, 7, i), mat(7, 5, i + 50) end
    local saved = tide.config.get_num_threads()
    for _, threads in ipairs {1, 2, 4} do
      tide.config.set_num_threads(threads)
      local c = tide.matmul(f64(a), f64(b)):totable()
      for i = 1, 40 do h.close(c[i], ref(a[i], b[i]), 1e-12) end
    end
    tide.config.set_num_threads(saved)
  end)

  it("cuts large products into tiles over the pool (any layout, any thread count)", function()
    -- Above 64^3 multiply-adds a product is cut into tiles of C, one BLAS
    -- call each (oneDNN for float32, OpenBLAS for float64): odd sizes leave
    -- short last tiles; flags, views and batches move each tile's corner.
    -- The reference is the float64 product on one thread, which is not cut.
    tide.random.set_seed(7)
    local function u(shape) return tide.random.uniform(shape, {minval = -1, maxval = 1}) end
    local a, b = u{300, 70}, u{70, 517}
    local batched, bs = u{3, 129, 70}, u{3, 70, 260}
    local wide = u{400, 600}
    local cases = {
      {a, b}, {T(a), b, {transpose_a = true}}, {a, T(b), {transpose_b = true}}, {T(b), T(a)},
      {batched, bs}, {batched, b}, {wide:slice{{0, 300}, {10, 80}}, b},
    }
    local saved = tide.config.get_num_threads()
    tide.config.set_num_threads(1)
    local want = {}
    for i, c in ipairs(cases) do want[i] = tide.matmul(c[1]:cast("float64"), c[2]:cast("float64"), c[3]) end
    for _, threads in ipairs {2, 3} do
      tide.config.set_num_threads(threads)
      for i, c in ipairs(cases) do
        for _, dt in ipairs {"float32", "float64"} do
          local got = tide.matmul(c[1]:cast(dt), c[2]:cast(dt), c[3])
          assert.are.same(want[i].shape, got.shape)
          local err = tide.reduce_max(tide.abs(got:cast("float64") - want[i])):item()
          assert(err < (dt == "float32" and 1e-4 or 1e-12),
            string.format("case %d, %s, %d threads: largest error %g", i, dt, threads, err))
        end
      end
    end
    tide.config.set_num_threads(saved)
  end)

  it("treats 1-D operands as vectors and drops their dim", function()
    local v = tide.matmul(f32{1, 2, 3}, f32(B))
    assert.are.same({2}, v.shape)
    assert.are.same({58, 64}, v:totable())
    local w = tide.matmul(f32(A), f32{1, 1, 1})
    assert.are.same({2}, w.shape)
    assert.are.same({6, 15}, w:totable())
    local s = tide.matmul(f32{1, 2, 3}, f32{4, 5, 6})
    assert.are.same({}, s.shape)
    assert.are.equal(32, s:item())
    local bw = tide.matmul(f32{A, A}, f32{1, 0, 1})   -- [2, 2, 3] @ [3]
    assert.are.same({2, 2}, bw.shape)
    assert.are.same({{4, 10}, {4, 10}}, bw:totable())
    local vb = tide.matmul(f32{1, 1}, f32{A, A})      -- [2] @ [2, 2, 3]
    assert.are.same({2, 3}, vb.shape)
    assert.are.same({{5, 7, 9}, {5, 7, 9}}, vb:totable())
    -- transposing a matrix operand still applies; a vector has nothing to flip
    assert.are.same({6, 15}, tide.matmul(f32{{1, 4}, {2, 5}, {3, 6}}, f32{1, 1, 1}, {transpose_a = true}):totable())
    assert.are.same({32}, {tide.matmul(f32{1, 2, 3}, f32{4, 5, 6}, true, true):item()})
    -- a strided vector
    assert.are.same({58, 64}, tide.matmul(f32{1, 0, 2, 0, 3}:slice{{0, 5, 2}}, f32(B)):totable())
  end)

  it("computes integers exactly and wraps on overflow", function()
    assert.are.same(AB, tide.matmul(tide.tensor(A), tide.tensor(B)):totable())
    local a64 = tide.tensor({{3000000000, 1}}, "int64")
    local b64 = tide.tensor({{2}, {5}}, "int64")
    assert.are.same({{6000000005}}, tide.matmul(a64, b64):totable())
    local i8 = tide.matmul(tide.tensor({{100}}, "int8"), tide.tensor({{3}}, "int8"))
    assert.are.same({{44}}, i8:totable())                 -- 300 wraps to 44
    local u8 = tide.matmul(tide.tensor({{200, 100}}, "uint8"), tide.tensor({{1}, {1}}, "uint8"))
    assert.are.same({{44}}, u8:totable())                 -- 300 mod 256
    local big = tide.tensor({{2147483647}}, "int32")
    assert.are.same({{-2}}, tide.matmul(big, tide.tensor({{2}}, "int32")):totable())
  end)

  it("computes float64 in double precision", function()
    local c = tide.matmul(f64{{1e-10, 1}}, f64{{1}, {1}})
    assert.are.equal("float64", c.dtype)
    assert.are.equal(1 + 1e-10, c:totable()[1][1])
  end)

  it("computes float16 and bfloat16 through float32", function()
    for _, dt in ipairs {"float16", "bfloat16"} do
      local c = tide.matmul(tide.tensor(A, dt), tide.tensor(B, dt))
      assert.are.equal(dt, c.dtype)
      assert.are.same(AB, c:totable())
      local t = tide.matmul(T(tide.tensor({{1, 4}, {2, 5}, {3, 6}}, dt)), tide.tensor(B, dt), {transpose_b = false})
      assert.are.same(AB, t:totable())
      local v = tide.matmul(tide.tensor({1, 2, 3}, dt), tide.tensor(B, dt))
      assert.are.same({58, 64}, v:totable())
    end
    h.close(tide.matmul(tide.tensor({{0.5, 0.25}}, "float16"), tide.tensor({{2}, {4}}, "float16")), {{2}})
  end)

  it("handles empty dims", function()
    local z = tide.matmul(tide.zeros{2, 0}, tide.zeros{0, 3})
    assert.are.same({2, 3}, z.shape)
    assert.are.same({{0, 0, 0}, {0, 0, 0}}, z:totable())
    local zi = tide.matmul(tide.zeros({2, 0}, "int32"), tide.zeros({0, 2}, "int32"))
    assert.are.same({{0, 0}, {0, 0}}, zi:totable())
    assert.are.same({0, 3}, tide.matmul(tide.zeros{0, 4}, tide.zeros{4, 3}).shape)
    assert.are.same({5, 0, 3}, tide.matmul(tide.zeros{5, 0, 4}, tide.zeros{4, 3}).shape)
  end)

  it("rejects mismatched inner dims, naming both shapes", function()
    local err = h.errors("matmul: inner dimensions do not match", tide.matmul, f32(A), f32(A))
    assert.truthy(err:find("[2, 3]", 1, true) and err:find("(3 vs 2)", 1, true))
    h.errors("transposed", tide.matmul, f32(A), f32(B), {transpose_b = true})
    h.errors("inner dimensions", tide.matmul, f32{1, 2}, f32(B))
    h.errors("inner dimensions", tide.matmul, f32(A), f32{1, 2})
  end)

  it("rejects other bad arguments", function()
    h.errors("batch dimensions do not broadcast", tide.matmul, f32{A, A}, f32{B, B, B})
    h.errors("dtype mismatch: a is float32 but b is float64", tide.matmul, f32(A), f64(B))
    h.errors("matmul: a must be a numeric tensor", tide.matmul, tide.tensor{{true}}, tide.tensor{{false}})
    h.errors("rank >= 1", tide.matmul, f32(2), f32(B))
    h.errors("two operands", tide.matmul, f32(A))
    h.errors("two operands", tide.matmul, nil, f32(A))
    h.errors("transpose_a must be true or false", tide.matmul, f32(A), f32(B), {transpose_a = 1})
    h.errors("unknown option 'transpose'", tide.matmul, f32(A), f32(B), {transpose = true})
  end)
end)

-- cpu/gemm.c's paths: a product with one row or one column goes to BLAS's
-- gemv (every transpose and stride), small float32 products to the library
-- measured faster here (cpu/gemm_small.c), pinned by TIDE_GEMM_SMALL.
describe("matmul's product paths", function()
  local function transposed(t) -- the table's transpose
    local out = {}
    for j = 1, #t[1] do
      out[j] = {}
      for i = 1, #t do out[j][i] = t[i][j] end
    end
    return out
  end

  it("runs one-row and one-column products with every transpose and layout", function()
    for _, mkn in ipairs{{1, 37, 23}, {29, 31, 1}, {1, 17, 1}, {1, 1, 5}} do
      local m, k, n = mkn[1], mkn[2], mkn[3]
      local a, b = mat(m, k, 3), mat(k, n, 4)
      local want = ref(a, b)
      for _, make in ipairs{f32, f64} do
        local tol = make == f32 and 1e-5 or 1e-12
        local at, bt = make(transposed(a)), make(transposed(b))
        h.close(tide.matmul(make(a), make(b)), want, tol)
        h.close(tide.matmul(at, make(b), {transpose_a = true}), want, tol)
        h.close(tide.matmul(make(a), bt, {transpose_b = true}), want, tol)
        h.close(tide.matmul(at, bt, {transpose_a = true, transpose_b = true}), want, tol)
        h.close(tide.matmul(T(at), T(bt)), want, tol) -- strided views, no copy
        -- a row or column picked out of a wider matrix: a stride other than 1
        local wide_b = make(transposed(mat(n, k, 4)))
        if n == 1 then
          local cols = tide.concat({make(b), make(mat(k, 2, 9))}, 1)
          h.close(tide.matmul(make(a), cols:slice{{}, {0, 1}}), want, tol)
        end
        if m == 1 then
          local rows = tide.concat({make(mat(2, k, 9)), make(a)}, 0)
          h.close(tide.matmul(rows:slice{{2, 3}, {}}, make(b)), want, tol)
          h.close(tide.matmul(T(make(mat(k, 3, 8))):slice{{1, 2}, {}}, wide_b),
                  ref({transposed(mat(k, 3, 8))[2]}, transposed(mat(n, k, 4))), tol)
        end
      end
    end
  end)

  it("writes a one-row result over a block that held NaN", function()
    for _ = 1, 3 do
      local stale = tide.fill({1, 64}, 0 / 0) -- freed blocks of the result's size come back
      stale = nil
      collectgarbage()
      local x, w = tide.ones{1, 8}, tide.ones{8, 64}
      local y = tide.matmul(x, w)
      assert.are.equal(8, tide.reduce_max(y):item())
      assert.are.equal(8, tide.reduce_min(y):item())
    end
  end)

  it("runs batched one-row products (a batch of single rows)", function()
    local a, b = mat(1, 9, 5), mat(9, 4, 6)
    local r = tide.matmul(f32{a, a, a}, f32(b))
    assert.are.same({3, 1, 4}, r.shape)
    for i = 0, 2 do h.close(r[i], ref(a, b), 1e-5) end
  end)

  it("says how products run, measured or pinned by TIDE_GEMM_SMALL", function()
    local plan = tide.config.gemm_plan()
    assert.truthy(plan:find("gemv", 1, true), plan)
    assert.truthy(plan:find("(measured)", 1, true) or plan:find("TIDE_GEMM_SMALL", 1, true), plan)
    local prog = require "tide_program"
    local dir = prog.make_tmpdir("gemm_plan")
    local script = dir .. "/plan.lua"
    prog.write_file(script, [[
      local tide = require "tide"
      local a, b = tide.random.normal({40, 40}), tide.random.normal({40, 40})
      local d = tide.reduce_max(tide.abs(tide.matmul(a, b) - tide.matmul(tide.cast(a, "float64"), tide.cast(b, "float64")):cast("float32")))
      io.write(tide.config.gemm_plan(), "\n", d:item() < 1e-4 and "close" or "FAR", "\n")]])
    for _, pin in ipairs{"openblas", "onednn", "20000", "bogus"} do
      local status, out = prog.sh(dir, "TIDE_GEMM_SMALL=" .. pin .. " " .. prog.path .. " " .. script)
      assert.are.equal(0, status, out)
      assert.truthy(out:find("close", 1, true), out)
      if pin == "bogus" then assert.truthy(out:find("(measured)", 1, true), out)
      else assert.truthy(out:find("TIDE_GEMM_SMALL=" .. pin, 1, true), out) end
    end
    prog.remove_tmpdir(dir)
  end)
end)
