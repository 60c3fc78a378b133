-- bench/text_corpus.lua — the synthetic corpus of the text benches (text.lua, text_bpe.lua), made identically
-- by bench/text_corpus.py for their peers: pseudo-words from syllables, Zipf-ish picks, an LCG both languages share.
--   local corpus = dofile(dir .. "text_corpus.lua")(N) -- { sentences = {...}, words = {...}, SYL = {...} }
return function(N, WORDS_PER)
  WORDS_PER = WORDS_PER or 24
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
  return { sentences = sentences, words = words, SYL = SYL }
end
