-- tests/spec/io/special_files_spec.lua — every reader given a FIFO where it
-- expects a file (issue 29, item 11): a clear error, never an open that
-- waits for a writer that never comes. Each case runs in its own tide
-- process under `timeout`, so a reader that blocks fails its case instead
-- of hanging the suite.
local program = require "tide_program"

local TIMEOUT = 30

describe("a FIFO where a file is expected", function()
  local dir
  local function P(name) return dir .. "/" .. name end

  setup(function()
    dir = program.make_tmpdir("fifo")
    for _, name in ipairs { "x.safetensors", "x.npy", "x.idx", "x.csv", "x.tfrecord", "x.txt", "trace.json",
                            "ckpt.safetensors", "log.csv", "cache" } do
      assert(os.execute("mkfifo " .. program.quote(P(name))) == 0)
    end
    for _, sub in ipairs { "model", "ckpts" } do assert(os.execute("mkdir " .. program.quote(P(sub))) == 0) end
    assert(os.execute("mkfifo " .. program.quote(P("model/saved_model.json"))) == 0)
    assert(os.execute("mkfifo " .. program.quote(P("ckpts/checkpoint"))) == 0)
  end)

  teardown(function() program.remove_tmpdir(dir) end)

  -- Run `code` (after `local tide = require "tide"`) in a new tide process:
  -- its exit status and stderr.
  local function run(code)
    local script = P("case.lua")
    program.write_file(script, "local tide = require 'tide'\n" .. code .. "\n")
    local rc, _, err = program.sh(dir, "timeout " .. TIMEOUT .. " " .. program.quote(program.path) .. " " ..
      program.quote(script))
    return rc, err
  end

  -- `code` fails at once with a message holding `expect`.
  local function refused(code, expect)
    local rc, err = run(code)
    assert.are_not.equal(124, rc, "timed out: the reader blocked on the FIFO")
    assert.are_not.equal(0, rc, "no error: " .. err)
    assert.truthy(err:find(expect, 1, true), err)
  end

  local cases = {
    { "safetensors", "require('tide.safetensors').load_file(%q)", "x.safetensors", "not a regular file" },
    { "read_npy", "tide.io.read_npy(%q)", "x.npy", "it is a FIFO, not a regular file" },
    { "read_idx", "tide.io.read_idx(%q)", "x.idx", "not a regular file" },
    { "CsvDataset", "for _ in tide.data.experimental.CsvDataset(%q, {0}):iter() do end", "x.csv",
      "it is a FIFO, not a regular file" },
    { "tf_record_iterator", "for _ in tide.io.tf_record_iterator(%q) do end", "x.tfrecord",
      "it is a FIFO, not a regular file" },
    { "TFRecordDataset", "for _ in tide.data.TFRecordDataset(%q):iter() do end", "x.tfrecord",
      "it is a FIFO, not a regular file" },
    { "TextLineDataset", "for _ in tide.data.TextLineDataset(%q):iter() do end", "x.txt",
      "it is a FIFO, not a regular file" },
    { "profiler.read_trace", "tide.profiler.read_trace(%q)", "trace.json", "it is a FIFO, not a regular file" },
    { "saved_model.load", "tide.saved_model.load(%q)", "model", "not a regular file" },
    { "load_checkpoint", "tide.train.load_checkpoint(%q)", "ckpt.safetensors", "no checkpoint at" },
    { "CSVLogger (append)", "tide.callbacks.CSVLogger(%q, {append = true}):on_train_begin()", "log.csv",
      "it is a FIFO, not a regular file" },
  }
  for _, c in ipairs(cases) do
    it(c[1] .. " refuses it", function()
      refused(string.format(c[2], P(c[3])), c[4])
    end)
  end

  it("latest_checkpoint finds no checkpoint behind a FIFO index", function()
    local rc, err = run(string.format("assert(tide.train.latest_checkpoint(%q) == nil)", P("ckpts")))
    assert.are.equal(0, rc, err)
  end)

  it("a cache over a FIFO is no cache: the pass runs", function()
    local rc, err = run(string.format("local n = 0\n" ..
      "for _ in tide.data.Dataset.range(3):cache(%q):iter() do n = n + 1 end\nassert(n == 3)", P("cache")))
    assert.are_not.equal(124, rc, "timed out: the cache blocked on the FIFO")
    assert.truthy(rc == 0 or err:find("not a regular file", 1, true), err)
  end)

  it("tide summary and tide run refuse a FIFO saved_model.json", function()
    for _, args in ipairs { { "summary", P("model") }, { "run", P("model"), "--input", P("x.npy") } } do
      local cmd = "timeout " .. TIMEOUT .. " " .. program.quote(program.path)
      for _, a in ipairs(args) do cmd = cmd .. " " .. program.quote(a) end
      local rc, _, err = program.sh(dir, cmd)
      assert.are_not.equal(124, rc, "timed out: " .. args[1] .. " blocked on the FIFO")
      assert.truthy(err:find("not a regular file", 1, true), err)
    end
  end)
end)
