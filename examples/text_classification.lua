-- examples/text_classification.lua — TF's "Classify text with BERT": a BERT encoder from a TF SavedModel in TF
-- Hub's layout (tide.hub.KerasLayer, trainable), BERT's WordPiece tokenizer from the model's vocab.txt, a
-- subclassed classifier (dropout + Dense on the pooled output), Adam, 3 epochs on a tide.data pipeline
-- (shuffle, batch, prefetch), then the test accuracy.
--   build/tide examples/text_classification.lua [--fast] [--model DIR] [--lr RATE] [--epochs N]
-- DIR is a TF Hub BERT encoder SavedModel (inputs input_word_ids, input_mask, input_type_ids; outputs
-- pooled_output, sequence_output) with its assets/vocab.txt; the default is the tiny BERT of
-- tests/fixtures/tf_saved_model/bert (2 layers, hidden 64, random weights: bert_gen.py writes it with TF), and a
-- real BERT-base SavedModel runs unchanged. The data is a small labelled set of movie-review sentences made here
-- (no download). A pretrained BERT is fine-tuned at 2e-5, TF's guide's rate; --fast (what `make test` runs:
-- tests/sh/test_examples.sh) trains the random tiny encoder at 1e-3, which it needs to learn in 3 short epochs.
local tide = require "tide"

local function flag(name)
  for i = 1, #arg do if arg[i] == name then return arg[i + 1] or true end end
end
local FAST = flag("--fast") ~= nil
local MODEL = flag("--model") or "tests/fixtures/tf_saved_model/bert"
local LR = tonumber(flag("--lr") or "") or (FAST and 1e-3 or 2e-5)
local EPOCHS = tonumber(flag("--epochs") or "") or 3
local SEQ, BATCH = 16, 16
local N_TRAIN, N_TEST = FAST and 192 or 1024, FAST and 64 or 256

tide.random.set_seed(1) -- the head's initial weights and the dropout masks: the same run each time

local VOCAB = MODEL .. "/assets/vocab.txt"
do
  local f = io.open(VOCAB, "r")
  if not f then
    error(string.format("text_classification: %s is missing: --model must name a TF Hub BERT SavedModel folder " ..
      "with its assets/vocab.txt", VOCAB), 0)
  end
  f:close()
end

-- A labelled set of review sentences (1 = positive), from a fixed seed.
local GOOD = { "good", "great", "fun", "best", "excellent", "nice", "funny" }
local BAD = { "bad", "awful", "boring", "worst", "terrible", "poor", "dull" }
local TEMPLATES = { "the movie was %s", "this film is %s", "i think it was %s and %s", "a %s story , %s acting",
  "the plot is very %s", "it is really %s !" }
local function sentences(n, seed)
  math.randomseed(seed)
  local text, labels = {}, {}
  for i = 1, n do
    local label = math.random(0, 1)
    local words = label == 1 and GOOD or BAD
    local t = TEMPLATES[math.random(#TEMPLATES)]
    text[i] = string.format(t, words[math.random(#words)], words[math.random(#words)])
    labels[i] = label
  end
  return text, labels
end

-- BERT's inputs for a list of sentences: [CLS] pieces [SEP], padded with 0 to SEQ.
local tokenizer = tide.text.WordPieceTokenizer { VOCAB, lowercase = true, strip_accents = true }
local CLS, SEP = tokenizer:token_to_id("[CLS]"), tokenizer:token_to_id("[SEP]")
local function bert_inputs(text)
  local ids, mask, types = {}, {}, {}
  for i, s in ipairs(text) do
    local pieces = tokenizer:tokenize(s):totable()
    local row = { CLS }
    for k = 1, math.min(#pieces, SEQ - 2) do row[#row + 1] = pieces[k] end
    row[#row + 1] = SEP
    ids[i], mask[i], types[i] = {}, {}, {}
    for k = 1, SEQ do
      ids[i][k], mask[i][k], types[i][k] = row[k] or 0, row[k] and 1 or 0, 0
    end
  end
  return { input_word_ids = tide.tensor(ids, "int32"), input_mask = tide.tensor(mask, "int32"),
    input_type_ids = tide.tensor(types, "int32") }
end

local train_text, train_labels = sentences(N_TRAIN, 1)
local test_text, test_labels = sentences(N_TEST, 2)
local train = tide.data.Dataset.from_tensor_slices { bert_inputs(train_text), tide.tensor(train_labels, "int32") }
  :shuffle(N_TRAIN, { seed = 7 }):batch(BATCH):prefetch(tide.data.AUTOTUNE)
local test = tide.data.Dataset.from_tensor_slices { bert_inputs(test_text), tide.tensor(test_labels, "int32") }
  :batch(BATCH)

-- The classifier: the encoder's pooled output, dropout, a Dense layer of 2 logits.
local Classifier = tide.Model:extend("BertClassifier")
function Classifier:init()
  self.encoder = tide.hub.KerasLayer { MODEL, trainable = true }
  -- (Keras 3's way: tide.layers.TFSMLayer{MODEL, call_endpoint = "serving_default", trainable = true})
  self.dropout = tide.layers.Dropout { 0.1 }
  self.classifier = tide.layers.Dense { 2 }
end
function Classifier:call(inputs, opts)
  local pooled = self.encoder(inputs).pooled_output
  return self.classifier(self.dropout(pooled, opts))
end

local model = Classifier()
model:compile {
  optimizer = tide.optimizers.Adam { LR },
  loss = tide.losses.SparseCategoricalCrossentropy { from_logits = true },
  metrics = { tide.metrics.SparseCategoricalAccuracy { name = "accuracy" } },
}
print(string.format("BERT from %s: %d trainable weights; %d training sentences, learning rate %g", MODEL,
  #model.encoder.trainable_weights, N_TRAIN, LR))
model:fit(train, { epochs = EPOCHS, verbose = FAST and 0 or 1 })
local result = model:evaluate(test, { return_dict = true, verbose = 0 })
print(string.format("test loss: %.4f", result.loss))
print(string.format("test accuracy: %.4f", result.accuracy))
local probs = tide.nn.softmax(model(bert_inputs { "the movie was great", "it is really awful !" }))
print(string.format("p(positive): %.3f for 'the movie was great', %.3f for 'it is really awful !'",
  probs[0][1]:item(), probs[1][1]:item()))
if FAST then assert(result.accuracy > 0.75, "the fine-tuned classifier should beat chance (0.5) clearly") end
