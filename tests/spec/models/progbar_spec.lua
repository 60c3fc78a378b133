-- tests/spec/models/progbar_spec.lua — Keras 3's progress bar: the line's
-- format, redrawn in place with \r on a terminal (a pseudo-terminal made by
-- `script` from bsdutils), one finished line per epoch through a pipe,
-- verbose 2's summary line, and nothing at verbose 0.
local tide = require "tide"
local progbar = require "tide.models.progbar"

local function run(cmd)
  local p = io.popen(cmd)
  local out = p:read("*a")
  p:close()
  return out
end

local TIDE = (os.getenv("BUILD") or "build") .. "/tide"
local SCRIPT = "tests/support/fit_progress.lua"
local E = "\27%["
local FULL = string.rep("━", 20)
-- Keras 3's finished line: bold count, the bar (green done, white rest), bold elapsed time, time per step, metrics
local BAR = E .. "1m50/50" .. E .. "0m " .. E .. "32m" .. FULL .. E .. "0m" .. E .. "37m" .. E .. "0m " .. E ..
  "1m%d+s" .. E .. "0m %d+u?m?s/step %- loss: %d%.%d%d%d%d %- accuracy: %d%.%d%d%d%d"

describe("progress bar", function()
  it("formats Keras 3's line: count, bar, ETA, time per step, metrics", function()
    local written = {}
    local bar = progbar.new { target = 469, dynamic = true, interval = 0, stateful_metrics = true,
      write = function(s) written[#written + 1] = s end }
    bar:update(100, { { "loss", 0.51 }, { "accuracy", 0.82 } }, false)
    local want = "\r" .. E .. "1m100/469" .. E .. "0m " .. E .. "32m" .. string.rep("━", 4) .. E .. "0m" .. E ..
      "37m" .. string.rep("━", 16) .. E .. "0m " .. E .. "1m%d+s" .. E .. "0m %d+u?m?s/step %- loss: 0%.5100 %- " ..
      "accuracy: 0%.8200$"
    assert.truthy(written[1]:match("^" .. want), written[1])
    bar:update(469, { { "loss", 0.00001 } }, true)
    -- the redraw first backs over the previous line's visible width (characters, not bytes), as Keras
    local back = written[2]:match("^\b*")
    local plain = written[1]:gsub("\27%[%d*m", ""):gsub("^\r", ""):gsub("━", "=")
    assert.are.equal(#plain, #back)
    assert.truthy(written[2]:match("^\b*\r" .. E .. "1m469/469" .. E .. "0m " .. E .. "32m" .. FULL .. E .. "0m" ..
      E .. "37m" .. E .. "0m " .. E .. "1m%d+s" .. E .. "0m %d+u?m?s/step %- loss: 1%.0000e%-05 %- accuracy: 0%.8200\n$"),
      written[2])
  end)

  it("is redrawn in place on a terminal (a pty via script)", function()
    local out = run(string.format("script -qec '%s %s 1' /dev/null", TIDE, SCRIPT))
    assert.truthy(out:find("Epoch 1/2", 1, true), out)
    assert.truthy(out:find("Epoch 2/2", 1, true))
    local _, redraws = out:gsub("\r" .. E .. "1m%s*%d+/50", "")
    assert.is_true(redraws >= 4, "expected the bar redrawn with \\r, got:\n" .. out)
    assert.truthy(out:match(BAR), out)
  end)

  it("prints one finished line per epoch when stdout is a pipe", function()
    local out = run(string.format("%s %s 1 | cat", TIDE, SCRIPT))
    assert.is_nil(out:find("\r", 1, true))
    local lines = {}
    for line in out:gmatch("[^\n]+") do lines[#lines + 1] = line end
    assert.are.equal(5, #lines, out)
    assert.are.equal("Epoch 1/2", lines[1])
    assert.truthy(lines[2]:match("^" .. BAR .. "$"), lines[2])
    assert.are.equal("Epoch 2/2", lines[3])
    assert.truthy(lines[4]:match("^" .. BAR .. "$"), lines[4])
    assert.are.equal("done", lines[5])
  end)

  it("verbose 2: one summary line per epoch; verbose 0: nothing", function()
    local out = run(string.format("%s %s 2 | cat", TIDE, SCRIPT))
    assert.truthy(out:match("\n50/50 %- %d+s %- %d+u?m?s/step %- loss: %d%.%d+ %- accuracy: %d%.%d+\n"),
      out)
    assert.are.equal("done\n", run(string.format("%s %s 0 | cat", TIDE, SCRIPT)))
  end)

  it("isatty tells a pipe from a terminal", function()
    assert.are.equal("false", run(TIDE .. [[ -e 'print(require("tide.models.progbar").isatty(1))' | cat]]):match("%a+"))
    assert.is_boolean(progbar.isatty(1))
  end)
end)
