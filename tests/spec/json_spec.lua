-- tests/spec/json_spec.lua — tide.json: decoding through libtide's cJSON
-- reader, encoding plain data, round trips, and the errors.
local tide = require "tide"
local json = require "tide.json"
local h = require "helpers"

describe("tide.json", function()
  it("decodes every kind: objects, arrays (null as tide.None), strings with escapes, numbers, booleans", function()
    local v = json.decode('{"a": [1, 2.5, -3e2, null], "b": {"c": "x\\n\\u00e9\\"", "d": true, "e": false}, ' ..
      '"f": null, "g": []}')
    assert.are.same({ 1, 2.5, -300, tide.None }, v.a)
    assert.are.equal('x\n\195\169"', v.b.c)
    assert.is_true(v.b.d)
    assert.is_false(v.b.e)
    assert.is_nil(v.f)
    assert.are.same({}, v.g)
    assert.are.equal(7, json.decode("7"))
  end)

  it("encodes plain data, keys sorted, and round-trips it", function()
    local data = { name = "dense", units = 64, rate = 0.1, shape = { tide.None, 28, 28, 1 }, flags = { true, false },
      nested = { list = { { a = 1 }, { b = "q\"uote\\" } } }, text = "tab\there\1" }
    local text = json.encode(data)
    assert.are.equal('{"flags":[true,false],"name":"dense"', text:sub(1, 36))
    assert.are.same(data, json.decode(text))
    assert.are.equal("0.1", json.encode(0.1))
    assert.are.equal("1e+300", json.encode(1e300))
    assert.are.equal("{}", json.encode({}))
  end)

  it("names what is wrong", function()
    h.errors("json: invalid JSON at byte 9", json.decode, '{"a": 1, }')
    h.errors("json: invalid JSON", json.decode, '{"a": 1} trailing')
    h.errors("json: invalid JSON", json.decode, "")
    h.errors("json: nested deeper than 512 levels", json.decode, string.rep("[", 600) .. string.rep("]", 600))
    h.errors("expects JSON text (a string), got number", json.decode, 3)
    h.errors("json.encode: the value.x is nan, which JSON cannot hold", json.encode, { x = 0 / 0 })
    h.errors("json.encode: the value.f is a function", json.encode, { f = print })
    h.errors("mixes list entries and named fields", json.encode, { 1, 2, a = 3 })
    h.errors("has a boolean key", json.encode, { [true] = 1 })
    local cycle = {}
    cycle.self = cycle
    h.errors("nested too deep (a cycle?)", json.encode, cycle)
  end)
end)
