-- bench/text.lua — issue 26's text preprocessing target: TextVectorization (int, output_sequence_length 64) and
-- WordPiece tokenizing (uncased, sequence_length 64) in a tide.data map (batches of 256, map parallel AUTOTUNE)
-- over a synthetic corpus that bench/text_peers.py makes identically, in sentences/s (medians of 5 epochs).
local tide = require "tide"
local timing = dofile(arg[0]:match("^(.-)[^/]*$") .. "timing.lua")

-- The corpus: an LCG both scripts share, pseudo-words from syllables, Zipf-ish picks.
local N, WORDS_PER = tonumber(os.getenv("TEXT_BENCH_N") or "20000"), 24
local state = 12345
local function rand(n)
  state = (state * 48271) % 2147483647   -- MINSTD: exact in doubles
  return state % n
end
local SYL = { "ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "po", "de", "qua", "xi", "bel", "tor", "un", "re" }
local words = {}
for i = 1, 4000 do
  local w = {}
  for _ = 1, 1 + i % 3 + rand(2) do w[#w + 1] = SYL[rand(#SYL) + 1] end
  words[i] = table.concat(w)
end
local sentences = {}
for s = 1, N do
  local t = {}
  for k = 1, WORDS_PER do
    local r = rand(4000)
    t[k] = words[math.floor(r * r / 4000) + 1]   -- small indices far more often
    if k == 1 then t[k] = t[k]:sub(1, 1):upper() .. t[k]:sub(2) end
  end
  sentences[s] = table.concat(t, " ") .. (s % 3 == 0 and "!" or ".")
end
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

local function rate(layer)
  local ds = tide.data.Dataset.from_tensor_slices(corpus):batch(256)
    :map(function(x) return layer(x) end, { num_parallel_calls = tide.data.AUTOTUNE })
    :prefetch(tide.data.AUTOTUNE)
  local function epoch() for _ in ds:iter() do end end
  return N / timing.measure(epoch, 1, 5)
end

-- interleaved rounds (the machine is shared): each figure is the median of its rounds' medians
local tvr, wpr = {}, {}
for r = 1, 3 do tvr[r] = rate(tv); wpr[r] = rate(wp) end
table.sort(tvr); table.sort(wpr)
timing.emit("text_vectorization_int_map", tvr[2], "sentences/s")
timing.emit("wordpiece_uncased_map", wpr[2], "sentences/s")
