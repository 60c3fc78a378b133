-- tests/spec/ops/signal_windows_spec.lua — tide.signal's window functions against
-- TensorFlow 2.21's (tests/fixtures/signal/windows.lua, written by gen.py there), their errors and length tensors.
local tide = require "tide"
local h = require "helpers"

local CASES = dofile("tests/fixtures/signal/windows.lua")
local TOL = { float16 = 1e-3, float32 = 2e-6, float64 = 1e-12 }

describe("tide.signal's windows", function()
  for _, c in ipairs(CASES) do
    local label = string.format("%s(%d%s)", c.fn, c.n, c.opts.dtype and (", " .. c.opts.dtype) or "")
    if c.opts.periodic == false then label = label .. " symmetric" end
    if c.opts.beta then label = label .. " beta " .. c.opts.beta end
    it(label .. (c.error and " raises as TF" or " gives TF's values"), function()
      local f = tide.signal[c.fn]
      if c.error then
        local err = h.errors(c.error, f, c.n, c.opts)
        assert.truthy(err:find(c.fn, 1, true), err)
        return
      end
      local y = f(c.n, c.opts)
      assert.are.equal(c.dtype, y.dtype)
      assert.are.same(c.shape, y.shape:as_list())
      h.close(y, c.values, TOL[c.dtype])
    end)
  end

  it("take the length as a 0-d integer tensor, and refuse other lengths", function()
    h.close(tide.signal.hann_window(tide.tensor(4)), { 0, 0.5, 1, 0.5 }, 0)
    h.errors("window_length must be an integer or a 0-d integer tensor", tide.signal.vorbis_window, "4")
    h.errors("window_length must be an integer >= 0, got 2.5", tide.signal.hamming_window, 2.5)
    h.errors("kaiser_window: beta must be a number", tide.signal.kaiser_window, 4, { beta = "big" })
  end)
end)
