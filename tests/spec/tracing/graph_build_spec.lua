-- Building graphs while tracing: traced functions calling traced functions
-- thousands deep, long chains of Lua-number constants, many reads of one
-- Variable, and the Lua lines the nodes record (bench/trace_build.lua
-- measures the time these take).
local tide = require "tide"

local function f32(v) return tide.tensor(v, "float32") end

-- How many times `pattern` (plain text) occurs in s.
local function count(s, pattern)
  local n, at = 0, 1
  while true do
    local i = s:find(pattern, at, true)
    if not i then return n end
    n, at = n + 1, i + #pattern
  end
end

describe("tracing functions that call traced functions", function()
  it("traces and runs 3,000 levels deep", function()
    local here = debug.getinfo(1, "l").currentline
    local f = tide.trace(function(x) local y = tide.cumsum(x) return y end)
    for _ = 2, 3000 do
      local g = f
      f = tide.trace(function(x) return g(x) * 1 end)
    end
    assert.are.same({1, 3}, f(f32{1, 2}):totable())
    -- the innermost op names its own line, three thousand calls up
    local text = f:get_concrete_function(f32{1, 2}).graph:text()
    assert.truthy(text:find("graph_build_spec.lua:" .. (here + 1), 1, true), text)
  end)

  it("names the line of the op in the function that made it, and the start of a function that tail-calls", function()
    local here = debug.getinfo(1, "l").currentline
    local inner = tide.trace(function(x)
      local y = tide.exp(x)
      return tide.sin(y)
    end)
    local outer = tide.trace(function(x)
      local z = inner(x) * 2
      return z
    end)
    local text = outer:get_concrete_function(f32{1}).graph:text()
    assert.truthy(text:find("graph_build_spec.lua:" .. (here + 6), 1, true), text) -- the mul in outer
    local g = tide.trace(function(x) return tide.tanh(x) end)
    text = g:get_concrete_function(f32{1}).graph:text()
    assert.truthy(text:find("graph_build_spec.lua:" .. (here + 11) .. " (a tail call", 1, true), text)
  end)
end)

describe("graph building", function()
  it("keeps one constant per Lua number of a long chain", function()
    local f = tide.trace(function(x)
      local h = x
      for _ = 1, 8000 do h = h * 1.0000001 + 0 end
      return h
    end)
    local cf = f:get_concrete_function(f32{1, 2})
    -- two constants at most (fusion folds scalar constants into its steps)
    assert.is_true(count(cf.graph:text(), "= const()") <= 2)
    local r = f(f32{1, 2}):totable()
    assert.is_true(math.abs(r[1] - 1.0008) < 1e-3 and math.abs(r[2] - 2.0016) < 2e-3)
  end)

  it("reads a Variable once until something assigns it", function()
    local v = tide.Variable({1, 2})
    local f = tide.trace(function(x)
      local h = x
      for _ = 1, 2000 do h = h + v end
      v:assign_add(h)
      for _ = 1, 3 do h = h + v end
      tide.cond(tide.reduce_sum(x):gt(0), function() v:assign_sub(x) return 0 end, function() return 0 end)
      return h + v
    end)
    local text = f:get_concrete_function(f32{1, 1}).graph:text()
    assert.are.equal(3, count(text, "read_variable()"))
    local r = f(f32{1, 1}):totable() -- h = x + 2000v = {2001, 4001}; v += h; h += 3v; v -= x; h + v
    assert.are.same({2001 + 3 * 2002 + 2001, 4001 + 3 * 4003 + 4002}, r)
    assert.are.same({2001, 4002}, v:read_value():totable())
  end)
end)
