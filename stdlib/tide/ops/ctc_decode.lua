-- stdlib/tide/ops/ctc_decode.lua — tf.nn's CTC helpers past the loss: ctc_beam_search_decoder (TF's CTCBeamSearchDecoder,
-- step for step, so ties and pruning pick what TF picks), collapse_repeated and ctc_unique_labels.
local binding = require "tide.binding"
local convert = require "tide.convert"
local dtype = require "tide.dtype"
local args = require "tide.args"
local tensor = require "tide.tensor"
local shape_ops = require "tide.ops.shape"
local math_ops = require "tide.ops.math"
local reduce = require "tide.ops.reduce"
local create = require "tide.ops.create"
local index_ops = require "tide.ops.index"

local M = {}
local fmt = string.format
local NEG_INF = -math.huge

local function lse(a, b) -- TF's LogSumExp, exact at -inf
  if a <= NEG_INF then return b end
  if b <= NEG_INF then return a end
  if a > b then return a + math.log(1 + math.exp(b - a)) end
  return b + math.log(1 + math.exp(a - b))
end

local function prob() return { total = NEG_INF, blank = NEG_INF, label = NEG_INF } end
local function copy(p) return { total = p.total, blank = p.blank, label = p.label } end

-- The beam: at most `width` entries, kept best first by newp.total (gtl::TopN: a full beam takes a new entry only
-- when it beats the worst, which it drops).
local function beam_push(beam, width, e)
  if #beam < width then beam[#beam + 1] = e; return end
  local worst, at = math.huge, 0
  for i, b in ipairs(beam) do if b.newp.total < worst then worst, at = b.newp.total, i end end
  if e.newp.total > worst then beam[at] = e end
end
local function bottom(beam)
  local worst
  for _, b in ipairs(beam) do if not worst or b.newp.total < worst.newp.total then worst = b end end
  return worst
end
local function sorted(beam)
  local out = {}
  for i, b in ipairs(beam) do out[i] = b end
  table.sort(out, function(a, b) return a.newp.total > b.newp.total end)
  return out
end

local function child(b, label)
  local c = b.children[label]
  if not c then
    c = { parent = b, label = label, children = {}, oldp = prob(), newp = prob() }
    b.children[label] = c
  end
  return c
end

-- One sequence: rows[t][k] the logits of step t (the blank is the last class), n steps.
local function decode_one(rows, n, k, width)
  local root = { label = -1, children = {}, oldp = prob(), newp = { total = 0, blank = 0, label = NEG_INF } }
  local beam = { root }
  local blank = k
  for t = 1, n do
    local row = rows[t]
    local maxc = NEG_INF -- (named as TF's; the rows' log-softmax normalizer, which TF's kernel takes off too)
    for j = 1, k do if row[j] > maxc then maxc = row[j] end end
    local sum = 0
    for j = 1, k do sum = sum + math.exp(row[j] - maxc) end
    maxc = maxc + math.log(sum)
    local branches = sorted(beam)
    beam = {}
    for _, b in ipairs(branches) do b.oldp = copy(b.newp) end
    for _, b in ipairs(branches) do
      if b.parent then
        if b.parent.newp.total ~= NEG_INF then
          local previous = b.label == b.parent.label and b.parent.oldp.blank or b.parent.oldp.total
          b.newp.label = lse(b.newp.label, previous)
        end
        b.newp.label = b.newp.label + row[b.label + 1] - maxc
      end
      b.newp.blank = b.oldp.total + row[blank] - maxc
      b.newp.total = lse(b.newp.blank, b.newp.label)
      beam_push(beam, width, b)
    end
    local function candidate(p)
      return p.total > NEG_INF and (#beam < width or p.total > bottom(beam).newp.total)
    end
    for _, b in ipairs(branches) do
      if candidate(b.oldp) then
        for label = 0, k - 2 do
          local c = child(b, label)
          if c.newp.total == NEG_INF then
            c.newp.blank = NEG_INF
            local previous = c.label == b.label and b.oldp.blank or b.oldp.total
            c.newp.label = row[label + 1] - maxc + previous
            c.newp.total = c.newp.label
            if candidate(c.newp) then
              if #beam == width then bottom(beam).newp = prob() end
              beam_push(beam, width, c)
            else
              c.oldp, c.newp = prob(), prob()
            end
          end
        end
      end
    end
  end
  return sorted(beam)
end

local function label_seq(e)
  local out = {}
  while e.parent do
    table.insert(out, 1, e.label)
    e = e.parent
  end
  return out
end

-- ctc_beam_search_decoder(inputs, sequence_length, beam_width=100, top_paths=1): inputs [max_time, batch, classes]
-- logits, the blank the last class. Returns the top_paths decodings, each a SparseTensor's parts {indices [n, 2] int64,
-- values [n] int64, dense_shape {batch, longest}}, and log_probabilities [batch, top_paths] (of each path, from the
-- log-softmax of each step's logits). Eager (the results' sizes are the decodings').
function M.beam_search_decode(inputs, sequence_length, ...)
  local op = "ctc_beam_search_decoder"
  local o = args.parse(op, { "beam_width", "top_paths" }, ...)
  local x = convert.arg(inputs, op .. " (inputs)")
  if x.dt ~= binding.C.TIDE_FLOAT32 and x.dt ~= binding.C.TIDE_FLOAT64 then
    binding.error(fmt("%s: inputs must be float32 or float64, got %s", op, dtype.names[x.dt]))
  end
  if x.ndim ~= 3 then
    binding.error(fmt("%s: inputs must be 3-D [max_time, batch, classes], got shape %s", op, tostring(x.shape)))
  end
  if tensor.is_symbolic(x) then binding.error(op .. ": needs eager inputs (its result's size is the decoding's)") end
  local T, B, K = tonumber(x.dims[0]), tonumber(x.dims[1]), tonumber(x.dims[2])
  local width = o.beam_width == nil and 100 or args.int(op, "beam_width", o.beam_width)
  local top = o.top_paths == nil and 1 or args.int(op, "top_paths", o.top_paths)
  if width < 1 then binding.error(fmt("%s: beam_width must be at least 1, got %d", op, width)) end
  if top < 1 or top > width then
    binding.error(fmt("%s: top_paths must be in [1, beam_width = %d], got %d", op, width, top))
  end
  if K < 1 then binding.error(op .. ": inputs must have at least one class (the blank)") end
  local lens = convert.arg(sequence_length, op .. " (sequence_length)")
  if not dtype.is_int[lens.dt] or lens.ndim ~= 1 or tonumber(lens.dims[0]) ~= B then
    binding.error(fmt("%s: sequence_length must be a 1-D integer tensor of the batch size %d, got %s %s", op, B,
      dtype.names[lens.dt], tostring(lens.shape)))
  end
  local v, L = x:cast("float64"):totable(), lens:totable()
  local paths, scores = {}, {}
  for p = 1, top do paths[p] = { indices = {}, values = {}, longest = 0 } end
  for b = 1, B do
    local n = L[b]
    if n < 0 or n > T then binding.error(fmt("%s: sequence_length[%d] = %d is not in [0, %d]", op, b - 1, n, T)) end
    local rows = {}
    for t = 1, n do rows[t] = v[t][b] end
    local best = decode_one(rows, n, K, width)
    if #best < top then
      binding.error(fmt("%s: the beam of sequence %d holds %d paths, fewer than top_paths = %d", op, b - 1, #best, top))
    end
    scores[b] = {}
    for p = 1, top do
      local seq, out = label_seq(best[p]), paths[p]
      for i, lab in ipairs(seq) do
        out.indices[#out.indices + 1] = { b - 1, i - 1 }
        out.values[#out.values + 1] = lab
      end
      if #seq > out.longest then out.longest = #seq end
      scores[b][p] = best[p].newp.total
    end
  end
  local decoded = {}
  for p, out in ipairs(paths) do
    local idx = #out.indices > 0 and convert.tensor(out.indices, "int64", op) or convert.tensor({}, "int64", op):reshape({ 0, 2 })
    decoded[p] = { idx, convert.tensor(out.values, "int64", op), { B, out.longest } }
  end
  return decoded, convert.tensor(scores, dtype.names[x.dt], op)
end

-- collapse_repeated(labels, seq_length) as tf.nn.collapse_repeated: each row's first seq_length[b] labels with runs
-- merged, padded with 0 to the longest result -> (labels [batch, new_max], new lengths [batch] of seq_length's
-- dtype). Eager (the result's width is the data's).
function M.collapse_repeated(labels, seq_length)
  local op = "collapse_repeated"
  local lab = convert.arg(labels, op .. " (labels)")
  if lab.ndim ~= 2 then binding.error(fmt("%s: labels must be 2-D [batch, max_length], got shape %s", op, tostring(lab.shape))) end
  if tensor.is_symbolic(lab) then binding.error(op .. ": needs eager inputs (its result's width is the data's)") end
  local B, L = tonumber(lab.dims[0]), tonumber(lab.dims[1])
  local lens = convert.arg(seq_length, op .. " (seq_length)")
  if not dtype.is_int[lens.dt] or lens.ndim ~= 1 or tonumber(lens.dims[0]) ~= B then
    binding.error(fmt("%s: seq_length must be a 1-D integer tensor of the batch size %d, got %s %s", op, B,
      dtype.names[lens.dt], tostring(lens.shape)))
  end
  local v, n = lab:totable(), lens:totable()
  local rows, out_len, widest = {}, {}, 0
  for b = 1, B do
    local row, prev = {}, nil
    local m = math.max(0, math.min(n[b], L))
    for i = 1, m do
      if i == 1 or v[b][i] ~= prev then row[#row + 1] = v[b][i] end
      prev = v[b][i]
    end
    rows[b], out_len[b] = row, #row
    if #row > widest then widest = #row end
  end
  for b = 1, B do for i = #rows[b] + 1, widest do rows[b][i] = 0 end end
  local out = widest > 0 and convert.tensor(rows, dtype.names[lab.dt], op)
    or create.zeros({ B, 0 }, dtype.names[lab.dt])
  return out, convert.tensor(out_len, dtype.names[lens.dt], op)
end

-- ctc_unique_labels(labels) as tf.nn.ctc_unique_labels: per row, its distinct labels in first-seen order padded
-- with 0 (int64 [batch, L]) and each label's index among them (int32 [batch, L]). Composed of ops, so it traces:
-- eq[b, i, j] = (x[b, i] == x[b, j]); position i is new when no j < i equals it; its index is the count of new
-- positions up to its first occurrence, less one.
function M.ctc_unique_labels(labels)
  local op = "ctc_unique_labels"
  local x = convert.arg(labels, op .. " (labels)")
  if x.ndim ~= 2 then binding.error(fmt("%s: labels must be 2-D [batch, max_label_length], got shape %s", op, tostring(x.shape))) end
  if not dtype.is_int[x.dt] then binding.error(fmt("%s: labels must be an integer tensor, got %s", op, dtype.names[x.dt])) end
  local eq = math_ops.equal(shape_ops.expand_dims(x, 2), shape_ops.expand_dims(x, 1))          -- [B, L, L]
  local first = reduce.argmax(math_ops.cast(eq, "int32"), -1, "int32")                          -- [B, L]
  local ones = create.ones_like(x, "int32")
  local col = math_ops.sub(reduce.cumsum(ones, 1), 1)                                           -- j at [b, j]
  local row = math_ops.sub(reduce.cumsum(ones, 0), 1)                                           -- b at [b, j]
  local is_new = math_ops.cast(math_ops.equal(first, col), "int32")
  local rank = math_ops.sub(reduce.cumsum(is_new, 1), 1)
  local idx = shape_ops.gather(rank, first, { axis = 1, batch_dims = 1 })
  local y = index_ops.tensor_scatter_nd_update(create.zeros_like(x, "int64"), shape_ops.stack({ row, idx }, -1),
    math_ops.cast(x, "int64"))
  return y, idx
end

return M
