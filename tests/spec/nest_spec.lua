-- tests/spec/nest_spec.lua — tide.nest beyond tf.nest's fixture: the Lua side of
-- the key order (odd keys, holes, nil), the leaf rule (tensors, Variables,
-- specs, objects, composites, is_leaf), paths, the errors, and that every
-- walker of nested values in tide (trace types, cond/while structures, dataset
-- elements, a model's inputs and fit's arrays) follows nest.flatten's order.
local tide = require "tide"
local h = require "helpers"

local nest = tide.nest

describe("tide.nest's key order", function()
  it("sorts keys by type name, then by value: numbers before strings", function()
    assert.are.same({ "n1", "n2", "n10", "sA", "sa" }, nest.flatten({ a = "sa", A = "sA", [10] = "n10", [2] = "n2",
      [1] = "n1" }))
    assert.are.same({ "m", "z", "o" }, nest.flatten({ [-1.5] = "m", [0] = "z", [1] = "o" }))
  end)

  it("puts boolean keys first (\"boolean\" < \"number\") and table keys after strings", function()
    local k = {}
    assert.are.same({ "f", "t", "one", "s", "tbl" }, nest.flatten({ [true] = "t", [false] = "f", [1] = "one",
      s = "s", [k] = "tbl" }))
  end)

  it("walks a list in order and a table with holes or extra keys by its sorted keys", function()
    assert.is_true((nest.is_list({ 1, 2, 3 })))
    assert.is_true((nest.is_list({})))
    assert.is_false((nest.is_list({ 1, 2, x = 3 })))
    assert.is_false((nest.is_list({ [1] = 1, [3] = 3 })))
    assert.are.same({ "a", "b", "x" }, nest.flatten({ "a", "b", x = "x" }))
    assert.are.same({ "a", "c" }, nest.flatten({ [1] = "a", [3] = "c" }))
    local keys, n, list = nest.keys({ y = 1, [2] = 2, x = 3 })
    assert.are.same({ 2, "x", "y" }, keys)
    assert.are.equal(3, n)
    assert.is_false(list)
    keys, n, list = nest.keys({ "p", "q" })
    assert.are.same({ 1, 2 }, keys)
    assert.is_true(list)
  end)

  it("key_less is a strict order", function()
    assert.is_true(nest.key_less(1, "1"))
    assert.is_false(nest.key_less("1", 1))
    assert.is_false(nest.key_less("a", "a"))
    assert.is_true(nest.key_less(false, 0))
    local many = {}
    for i = 1, 20 do many[("k%02d"):format(21 - i)] = i end -- more than the insertion sort's 8
    local keys = nest.sorted_keys(many)
    for i = 2, #keys do assert.is_true(keys[i - 1] < keys[i]) end
  end)
end)

describe("tide.nest's leaf rule", function()
  it("takes everything but a plain table as a leaf", function()
    local t, v = tide.tensor { 1, 2 }, tide.Variable(tide.tensor { 3 })
    local s, fn = tide.TensorSpec({ 2 }, "float32"), function() end
    local shape = setmetatable({ 2, 3 }, tide.Shape)
    local flat = nest.flatten({ t, { v, s }, { shape = shape, fn = fn, str = "x", b = false } })
    assert.are.equal(7, #flat)
    assert.are.equal(t, flat[1])
    assert.are.equal(v, flat[2])
    assert.are.equal(s, flat[3])
    assert.are.equal(false, flat[4])
    assert.are.equal(fn, flat[5])
    assert.are.equal(shape, flat[6])
    assert.are.equal("x", flat[7])
    assert.is_false(nest.is_nested(t))
    assert.is_false(nest.is_nested(shape))
    assert.is_false(nest.is_nested("x"))
    assert.is_true(nest.is_nested({}))
    assert.are.same({ 5 }, nest.flatten(5))
  end)

  it("nil is a leaf at the top: flatten(nil) is {} and packs back from {n = 1}", function()
    assert.are.same({}, nest.flatten(nil))
    assert.are.equal(1, #nest.flatten_with_path(nil))
    assert.is_nil(nest.pack_sequence_as(nil, { n = 1 }))
    h.errors("the structure has 1 leaf, but flat has 0 values", nest.pack_sequence_as, nil, {})
    local p = nest.pack_sequence_as({ "a", "b", "c" }, { n = 3, 1, nil, 3 })
    assert.are.equal(1, p[1])
    assert.is_nil(p[2])
    assert.are.equal(3, p[3])
  end)

  it("a function returning nil leaves its key out", function()
    local r = nest.map_structure(function(x) if x > 1 then return x end end, { a = 1, b = 2 })
    assert.are.same({ b = 2 }, r)
  end)

  it("walks composites' fields only with expand_composites, and packs them back with their class", function()
    local rt = tide.RaggedTensor.from_row_splits(tide.tensor({ 1, 2, 3 }, "float32"),
      tide.tensor({ 0, 1, 3 }, "int64"))
    assert.is_true(nest.is_composite(rt))
    assert.is_false(nest.is_nested(rt))
    assert.is_true(nest.is_nested(rt, true))
    assert.are.same({ rt }, nest.flatten({ rt }))
    local flat = nest.flatten({ rt }, { expand_composites = true })
    assert.are.equal(2, #flat)
    assert.are.equal(rt.row_splits, flat[1]) -- its fields in the key order: row_splits, values
    assert.are.equal(rt.values, flat[2])
    local back = nest.pack_sequence_as({ rt }, { "s", "v" }, { expand_composites = true })
    assert.are.equal(getmetatable(rt), getmetatable(back[1]))
    assert.are.equal("s", back[1].row_splits)
    assert.are.equal("v", back[1].values)
    assert.is_true(nest.same_structure(rt, back[1], { expand_composites = true }))
    local other = setmetatable({ row_splits = 1, values = 2 }, { __tracing_composite = true })
    local same, why = nest.same_structure(rt, other, { expand_composites = true })
    assert.is_false(same)
    assert.truthy(why:find("different kinds of node", 1, true), why)
    assert.is_true(nest.same_structure(rt, other, { expand_composites = true, check_types = false }))
  end)

  it("is_leaf stops the walk at a node", function()
    local opts = { is_leaf = function(x) return type(x[1]) == "number" end }
    local s = { a = { 1, 2 }, b = { { 3 }, "x" } }
    assert.are.same({ { 1, 2 }, { 3 }, "x" }, nest.flatten(s, opts))
    local p = nest.pack_sequence_as(s, { "A", "B", "C" }, opts)
    assert.are.same({ a = "A", b = { "B", "C" } }, p)
  end)
end)

describe("tide.nest's paths", function()
  it("flatten_with_path and map_structure_with_path give the keys from the top", function()
    local s = { b = 1, a = { 2, { c = 3 } } }
    local got = {}
    for i, e in ipairs(nest.flatten_with_path(s)) do got[i] = nest.path_text(e[1]) .. "=" .. e[2] end
    assert.are.same({ "a[1]=2", "a[2].c=3", "b=1" }, got)
    local r = nest.map_structure_with_path(function(path, x, y) return #path .. ":" .. (x + y) end, s, s)
    assert.are.same({ b = "1:2", a = { "2:4", { c = "3:6" } } }, r)
    assert.are.same({ { {}, 7 } }, nest.flatten_with_path(7))
    assert.are.equal("the top level", nest.path_text({}))
    assert.are.equal('[2]["a b"].c', nest.path_text({ 2, "a b", "c" }))
  end)
end)

describe("tide.nest's errors", function()
  it("names what was wrong", function()
    h.errors("nest.flatten: options must be a table", nest.flatten, {}, 3)
    h.errors("nest.flatten: unknown option 'expand' (expand_composites=, is_leaf=)", nest.flatten, {},
      { expand = true })
    h.errors("nest.flatten: unknown option 'check_types'", nest.flatten, {}, { check_types = false })
    h.errors("nest.assert_same_structure: unknown option 'x' (check_types=, expand_composites=, is_leaf=)",
      nest.assert_same_structure, {}, {}, { x = 1 })
    h.errors("nest.same_structure: options must be a table {check_types=, expand_composites=, is_leaf=}, got string",
      nest.same_structure, {}, {}, "no")
    h.errors("nest.flatten: is_leaf must be a function, got string", nest.flatten, {}, { is_leaf = "x" })
    h.errors("nest.pack_sequence_as: flat must be a list of values (a Lua table), got number",
      nest.pack_sequence_as, { 1 }, 5)
    h.errors("nest.map_structure: the first argument must be a function, got table", nest.map_structure, {}, {})
    h.errors("nest.map_structure: give at least one structure", nest.map_structure, print)
    h.errors("nest.map_structure: structure 3 differs from structure 1 at b: different numbers of values",
      nest.map_structure, print, { a = 1, b = { 1 } }, { a = 2, b = { 2 } }, { a = 3, b = { 3, 4 } })
    h.errors("nest.assert_same_structure: the two structures differ at [2]: a node against a leaf",
      nest.assert_same_structure, { 1, { 2 } }, { 1, 2 })
    h.errors("different keys (a, b and a, c)", nest.assert_same_structure, { a = 1, b = 2 }, { a = 1, c = 2 })
  end)

  it("refuses a structure that holds itself", function()
    local c = {}
    c.x = { c }
    -- the cycle is named from where the walk noticed it: x[1] or [1].x
    local err = h.errors("nest.flatten: the structure holds itself (a cycle: ", nest.flatten, { c })
    assert.truthy(err:find("(a cycle: x[1] leads back to the same table)", 1, true)
      or err:find("(a cycle: [1].x leads back to the same table)", 1, true), err)
    h.errors("nest.pack_sequence_as: the structure holds itself (a cycle: ", nest.pack_sequence_as, c, {})
    h.errors("nest.map_structure: the structure holds itself (a cycle: ", nest.map_structure, print, c)
    h.errors("nest.flatten_with_path: the structure holds itself (a cycle: ", nest.flatten_with_path, c)
    h.errors("nest.assert_same_structure: the structure holds itself (a cycle: ", nest.assert_same_structure, c, c)
    local d = {}
    d.a = { b = d }
    h.errors("nest.map_structure: the structure holds itself (a cycle: ", nest.map_structure, print, d, d)
    local shared = { 1 }
    assert.are.same({ 1, 1 }, nest.flatten({ shared, shared })) -- a table met twice is no cycle
    local deep = {} -- a DAG deeper than the walks' tracking depth is no cycle either
    local level = deep
    for _ = 1, 40 do
      level[3] = { shared, shared }
      level = level[3]
    end
    assert.are.equal(80, #nest.flatten(deep))
  end)
end)

describe("every walker of nested values follows tide.nest's order", function()
  -- numbers before strings, numbers numerically: where string and numeric order disagree
  local function structure()
    local f = function(v) return tide.tensor({ v }, "float32") end
    return { [10] = f(3), [3] = f(2), b = { f(5), f(6) }, a = f(4), [-1] = f(1) }
  end
  local function values(list)
    local out = {}
    for i, t in ipairs(list) do out[i] = t:totable()[1] end
    return out
  end

  it("nest.flatten", function()
    assert.are.same({ 1, 2, 3, 4, 5, 6 }, values(nest.flatten(structure())))
  end)

  it("trace types: a traced function's inputs", function()
    local T = require "tide.tracing.trace_type"
    local slots = {}
    T.template_of(structure(), slots)
    assert.are.same({ 1, 2, 3, 4, 5, 6 }, values(slots))
    local f = tide.trace(function(s) return s[-1] + s[3] * 10 + s[10] * 100 + s.a * 1000 + s.b[2] * 10000 end)
    assert.are.same({ 64321 }, f(structure()):totable())
  end)

  it("cond and while_loop structures", function()
    local S = require "tide.tracing.structure"
    local s = S.structure(structure())
    local got = S.flat_like(s, s, function() return false end)
    assert.are.same({ 1, 2, 3, 4, 5, 6 }, values(got))
  end)

  it("a dataset element (string keys) and fit's arrays", function()
    local f = function(v) return tide.tensor({ v }, "float32") end
    local element = { b = f(3), a = { f(1), f(2) }, ["B"] = f(0) }
    local _, leaves = require("tide.data.structure").flatten(element, "test")
    assert.are.same({ 0, 1, 2, 3 }, values(leaves))
    assert.are.same({ 0, 1, 2, 3 }, values(nest.flatten(element)))
    local d = require("tide.models.data").flatten(structure(), "fit")
    assert.are.same({ 1, 2, 3, 4, 5, 6 }, values(d.leaves))
  end)

  it("Dataset.zip over a map and from_generator's output_signature", function()
    local D = tide.data.Dataset
    local z = D.zip { b = D.range(3), [0] = D.range(10, 13), a = D.range(20, 23) }
    assert.are.same({ 0, "a", "b" }, z.template.keys) -- the components' order in C
    local got = {}
    for e in z:iter() do got[#got + 1] = { e[0]:item(), e.a:item(), e.b:item() } end
    assert.are.same({ { 10, 20, 0 }, { 11, 21, 1 }, { 12, 22, 2 } }, got)
    local sig = { y = tide.TensorSpec({}, "int32"), [1.5] = tide.TensorSpec({}, "float32") }
    local g = D.from_generator(function()
      local i = 0
      return function()
        i = i + 1
        if i <= 2 then return { y = i, [1.5] = i / 2 } end
      end
    end, { output_signature = sig })
    assert.are.same({ 1.5, "y" }, g.template.keys)
    local ys = {}
    for e in g:iter() do ys[#ys + 1] = e.y:item() + e[1.5]:item() end
    assert.are.same({ 1.5, 3 }, ys)
  end)

  it("a functional model's inputs", function()
    tide.layers.clear_session()
    local ins = {}
    for i = 1, 4 do ins[i] = tide.Input { shape = { 1 }, name = "in" .. i } end
    local m = tide.Model { inputs = { [10] = ins[3], [3] = ins[2], a = ins[4], [-1] = ins[1] },
      outputs = tide.layers.Concatenate {} { ins[1], ins[2], ins[3], ins[4] } }
    local names = {}
    for i, kt in ipairs(m.inputs) do names[i] = kt.name end
    assert.are.same({ "in1", "in2", "in3", "in4" }, names)
  end)
end)
