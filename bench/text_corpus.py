"""bench/text_corpus.py — the synthetic corpus of the text benches' peers (text_peers.py, text_bpe_peers.py),
made as bench/text_corpus.lua makes it for tide: the same MINSTD generator, syllables and Zipf-ish picks."""

SYL = ["ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "po", "de", "qua", "xi", "bel", "tor", "un", "re"]


def make(n, words_per=24):
    """(sentences, words) of the corpus of n sentences."""
    state = 12345

    def rand(k):
        nonlocal state
        state = (state * 48271) % 2147483647
        return state % k

    words = []
    for i in range(1, 4001):
        w = [SYL[rand(len(SYL))] for _ in range(1 + i % 3 + rand(2))]
        words.append("".join(w))
    sentences = []
    for s in range(1, n + 1):
        t = []
        for k in range(1, words_per + 1):
            r = rand(4000)
            w = words[(r * r) // 4000]
            if k == 1:
                w = w[0].upper() + w[1:]
            t.append(w)
        sentences.append(" ".join(t) + ("!" if s % 3 == 0 else "."))
    return sentences, words
