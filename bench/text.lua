-- bench/text.lua — issue 26's text preprocessing target: TextVectorization (int, output_sequence_length 64) and
-- WordPiece tokenizing (uncased, sequence_length 64) in a tide.data map (batches of 256, map parallel AUTOTUNE)
-- over a synthetic corpus that bench/text_peers.py makes identically, in sentences/s (medians of 5 epochs).
local tide = require "tide"
local timing = dofile(arg[0]:match("^(.-)[^/]*$") .. "timing.lua")

-- The corpus (bench/text_corpus.lua, as bench/text_corpus.py makes it for the peers).
local N = tonumber(os.getenv("TEXT_BENCH_N") or "20000")
local made = dofile(arg[0]:match("^(.-)[^/]*$") .. "text_corpus.lua")(N)
local sentences, words, SYL = made.sentences, made.words, made.SYL
local corpus = tide.tensor(sentences, "string")

-- WordPiece's vocabulary: the 3000 first words, every syllable alone and as a suffix piece.
local vocab = { "[PAD]", "[UNK]", "[CLS]", "[SEP]", ".", "!" }
for i = 1, 3000 do vocab[#vocab + 1] = words[i] end
for _, s in ipairs(SYL) do vocab[#vocab + 1] = s; vocab[#vocab + 1] = "##" .. s end
local seen, uniq = {}, {}
for _, v in ipairs(vocab) do if not seen[v] then seen[v] = true uniq[#uniq + 1] = v end end

local L = tide.layers
local tv = L.TextVectorization { max_tokens = 20000, output_sequence_length = 64 }
local tv_vocab = {}
for i = 1, 3000 do tv_vocab[i] = words[i]:lower() end
local dedup, tvv = {}, {}
for _, v in ipairs(tv_vocab) do if not dedup[v] then dedup[v] = true tvv[#tvv + 1] = v end end
tv:set_vocabulary(tvv)
local wp = tide.text.WordPieceTokenizer { vocabulary = uniq, lowercase = true, strip_accents = true,
  sequence_length = 64 }

-- sentences per second of wall time (medians of 5 epochs), and per second of this process's CPU time over
-- them (os.clock: all threads), which a machine loaded by others disturbs less
local function rate(layer)
  local ds = tide.data.Dataset.from_tensor_slices(corpus):batch(256)
    :map(function(x) return layer(x) end, { num_parallel_calls = tide.data.AUTOTUNE })
    :prefetch(tide.data.AUTOTUNE)
  local function epoch() for _ in ds:iter() do end end
  local c0 = os.clock()
  local wall = timing.measure(epoch, 1, 5)
  return N / wall, 6 * N / (os.clock() - c0)   -- measure runs 1 warm-up + 5 epochs
end

-- interleaved rounds (the machine is shared): each figure is the median of its rounds' medians
local tvr, wpr, tvc, wpc = {}, {}, {}, {}
for r = 1, 3 do tvr[r], tvc[r] = rate(tv); wpr[r], wpc[r] = rate(wp) end
for _, t in ipairs { tvr, wpr, tvc, wpc } do table.sort(t) end
timing.emit("text_vectorization_int_map", tvr[2], "sentences/s")
timing.emit("wordpiece_uncased_map", wpr[2], "sentences/s")
timing.emit("text_vectorization_int_map_cpu", tvc[2], "sentences/cpu-s")
timing.emit("wordpiece_uncased_map_cpu", wpc[2], "sentences/cpu-s")
