-- tests/support/trace_ops_cases_nn.lua — tf.nn's later registry ops (the CTC loss, ...) for
-- tests/support/trace_ops_cases.lua (which merges them; same add() contract).
local tide = require "tide"

-- The cases, given trace_ops_cases' module (its data helpers and dtype lists).
return function(T)
  local data, cases = T.data, {}
  -- ctc_loss: the lengths keep their dims (a None batch is fine; the op needs each label checked at run time).
  cases.ctc_loss = function(add)
    for _, dt in ipairs(T.dtypes_of("ctc_loss")) do
      local labels, lab_len, seq_len = tide.tensor { { 1, 2, 2 }, { 3, 0, 0 } }, tide.tensor { 3, 1 }, tide.tensor { 5, 2 }
      add(dt .. " blank 0", function(x, l, ll, sl) return tide.nn.ctc_loss(l, x, ll, sl) end,
        { data({ 5, 2, 4 }, dt) * 0.2, labels, lab_len, seq_len }, { approx = true })
      add(dt .. " int64, blank 3, batch major", function(x, l, ll, sl)
        return tide.nn.ctc_loss(l, x, ll, sl, { blank_index = 3, logits_time_major = false })
      end, { data({ 2, 5, 4 }, dt) * 0.2, tide.tensor({ { 1, 2, 2 }, { 0, 0, 0 } }, "int64"), tide.tensor({ 3, 0 }, "int64"),
        tide.tensor({ 5, 1 }, "int64") }, { approx = true })
    end
  end
  return cases
end
