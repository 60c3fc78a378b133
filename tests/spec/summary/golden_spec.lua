-- tests/spec/summary/golden_spec.lua — tide.summary against TF 2.21: the
-- calls of tests/fixtures/summary/gen.py, repeated here, give Summary values
-- byte for byte identical to TF's (tags, steps, tensors, PNGs, metadata).
local tide = require "tide"
local prog = require "tide_program"
local reader = require "event_reader"
local S = tide.summary

local FIXTURE = "tests/fixtures/summary/tf_events.v2"

local function values(n, dt)
  local out = {}
  for i = 0, n - 1 do out[#out + 1] = ((i * 37) % 101) / 7 - 3 end
  return tide.tensor(out, dt or "float64")
end

local function ramp(n, f)
  local out = {}
  for i = 0, n - 1 do out[#out + 1] = f(i) end
  return out
end

-- The calls of gen.py, in its order.
local function write_all()
  S.scalar("loss", 0.5, { step = 0 })
  S.scalar("loss", 1 / 3, { step = 1, description = "the **loss**" })
  S.scalar("count", 7, { step = 2 })
  S.scalar("big/step", -2.5, { step = 2 ^ 40 })
  S.histogram("weights", values(1000), { step = 3 })
  S.histogram("weights_f32", values(257, "float32"), { step = 4, buckets = 7 })
  S.histogram("single", tide.fill({ 5 }, 2.25), { step = 5 })
  S.histogram("empty", tide.zeros({ 0 }, "float64"), { step = 6, buckets = 4 })
  S.histogram("no_buckets", values(10), { step = 7, buckets = 0 })
  S.text("note", "hello *world*", { step = 8 })
  S.text("table", { { "a", "b" }, { "c", "dé" } }, { step = 9 })
  local gray = tide.tensor(ramp(60, function(i) return (i * 13) % 256 end), "uint8"):reshape { 2, 5, 6, 1 }
  S.image("gray", gray, { step = 10 })
  local rgb = tide.tensor(ramp(144, function(i) return (i % 64) / 63 end), "float32"):reshape { 4, 3, 4, 3 }
  S.image("rgb", rgb, { step = 11, max_outputs = 2 })
  local rgba = tide.tensor(ramp(32, function(i) return (i * 7) % 256 end), "uint8"):reshape { 1, 4, 2, 4 }
  S.image("rgba", rgba, { step = 12, description = "four channels" })
end

describe("tide.summary against TF 2.21", function()
  local dir
  teardown(function() prog.remove_tmpdir(dir) end)

  it("writes the same Summary values as tf.summary for the same calls", function()
    dir = prog.make_tmpdir("summary_golden")
    local w = S.create_file_writer(dir)
    w:as_default(write_all)
    w:close()
    local tf_events = reader.read(FIXTURE)
    local tide_events = reader.read(w.path)
    assert.are.equal(#tf_events, #tide_events)
    assert.are.equal("brain.Event:2", tf_events[1].file_version)
    assert.are.equal("brain.Event:2", tide_events[1].file_version)
    assert.are.equal(14, #tide_events - 1)
    for i = 2, #tf_events do
      local a, b = tf_events[i], tide_events[i]
      local tag = a.values[1].tag
      assert.are.equal(a.step, b.step, tag)
      assert.are.equal(tag, b.values[1].tag)
      assert.are.equal(a.values[1].plugin_name, b.values[1].plugin_name, tag)
      assert.is_true(a.summary_raw == b.summary_raw, "Summary bytes differ for " .. tag)
    end
  end)
end)
