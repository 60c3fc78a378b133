-- bench/text_bpe.lua — keras_hub's BytePairTokenizer (GPT-2's byte-level BPE, the 420-token fixture vocabulary of
-- tests/fixtures/text) over a synthetic corpus that bench/text_bpe_peers.py makes identically: sentences per CPU-second.
local tide = require "tide"
local timing = dofile(arg[0]:match("^(.-)[^/]*$") .. "timing.lua")

-- The corpus (bench/text_corpus.lua, as bench/text_corpus.py makes it for the peers).
local N = tonumber(os.getenv("TEXT_BENCH_N") or "20000")
local made = dofile(arg[0]:match("^(.-)[^/]*$") .. "text_corpus.lua")(N)
local sentences = made.sentences
local corpus = tide.tensor(sentences, "string")
local BATCH = 256
local batches = {}
for b = 1, math.ceil(N / BATCH) do
  local rows = {}
  for i = (b - 1) * BATCH + 1, math.min(b * BATCH, N) do rows[#rows + 1] = sentences[i] end
  batches[b] = tide.tensor(rows, "string")
end

local bpe = tide.text.BytePairTokenizer { vocabulary = "tests/fixtures/text/bpe_vocab.json",
  merges = "tests/fixtures/text/bpe_merges.txt", sequence_length = 64 }

-- One thread: every batch tokenized by a plain call, sentences per CPU-second (os.clock: this process).
local function eager()
  local c0 = os.clock()
  for _, b in ipairs(batches) do bpe(b) end
  return N / (os.clock() - c0)
end

-- A tide.data map (parallel AUTOTUNE): sentences/s of wall time, and per CPU-second of the process.
local function map_rate()
  local ds = tide.data.Dataset.from_tensor_slices(corpus):batch(BATCH)
    :map(function(x) return bpe(x) end, { num_parallel_calls = tide.data.AUTOTUNE }):prefetch(tide.data.AUTOTUNE)
  local function epoch() for _ in ds:iter() do end end
  local c0 = os.clock()
  local wall = timing.measure(epoch, 1, 3)
  return N / wall, 4 * N / (os.clock() - c0)   -- measure runs 1 warm-up + 3 epochs
end

-- interleaved rounds (the machine is shared): medians of the rounds
local e, mw, mc = {}, {}, {}
eager()
for r = 1, 3 do e[r] = eager(); mw[r], mc[r] = map_rate() end
for _, t in ipairs { e, mw, mc } do table.sort(t) end
timing.emit("bpe_batch256_cpu", e[2], "sentences/cpu-s")
timing.emit("bpe_map", mw[2], "sentences/s")
timing.emit("bpe_map_cpu", mc[2], "sentences/cpu-s")
