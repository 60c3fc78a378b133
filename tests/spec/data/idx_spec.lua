-- tests/spec/data/idx_spec.lua — the examples' IDX reader
-- (tide.io.idx, tide.io.read_idx once tide.io exists): plain and gzipped files, Debian's Fashion-MNIST labels, and the errors for a missing, foreign or truncated file.
require "tide"
local idx = require "tide.io.idx"
local h = require "helpers"
local tmp = require "tmp"

local function write(path, bytes)
  local f = io.open(path, "wb")
  f:write(bytes)
  f:close()
end

describe("read_idx", function()
  local path = tmp.name()
  after_each(function() os.remove(path); os.remove(path .. ".gz") end)

  it("reads a plain and a gzipped IDX file into a uint8 tensor", function()
    write(path, "\0\0\8\2\0\0\0\2\0\0\0\3" .. string.char(1, 2, 3, 4, 5, 255))
    local t = idx.read_idx(path)
    assert.are.equal("uint8", t.dtype)
    assert.are.same({ { 1, 2, 3 }, { 4, 5, 255 } }, t:totable())
    os.execute("gzip -kf " .. path)
    assert.are.same({ { 1, 2, 3 }, { 4, 5, 255 } }, idx.read_idx(path .. ".gz"):totable())
  end)

  it("reads Debian's Fashion-MNIST test labels (tools/deps.sh installs them)", function()
    local t = idx.read_idx("/usr/share/datasets/fashion-mnist/t10k-labels-idx1-ubyte.gz")
    assert.are.same({ 10000 }, t.shape:as_list())
    assert.are.equal(9, t:totable()[1]) -- the first test image is an ankle boot
  end)

  it("names what is wrong", function()
    h.errors("cannot read '/nonexistent/x'", idx.read_idx, "/nonexistent/x")
    write(path, "PK\3\4junk") -- a file of a format tide knows is named (tide_file_kind)
    h.errors("is not an IDX file: it is a zip archive", idx.read_idx, path)
    write(path, "\7\7\7\7junk")
    h.errors("is not an IDX file of unsigned bytes", idx.read_idx, path)
    write(path, "\0\0\8\1\0\0\0\5" .. "abc")
    h.errors("holds 3 bytes of data, but its header says 5", idx.read_idx, path)
    write(path, "\0\0\8\1\0\0\0\2" .. "abc")
    h.errors("holds more bytes of data, but its header says 2", idx.read_idx, path)
    write(path, "\0\0\8\2\0\0\0\2\0\0")
    h.errors("is truncated in its header", idx.read_idx, path)
    write(path, "\31\139\8\0\0\0\0\0\0\3" .. ("\255"):rep(40))
    h.errors("holds corrupt gzip data", idx.read_idx, path)
    write(path, "\0\0")
    h.errors("is not an IDX file of unsigned bytes", idx.read_idx, path)
    -- a hostile header: 2^24 x 2^24 bytes from a 16-byte file, refused before allocating
    write(path, "\0\0\8\2\1\0\0\0\1\0\0\0" .. "abcd")
    h.errors("holds at most", idx.read_idx, path)
    write(path, "\0\0\8\9" .. ("\0\0\0\1"):rep(9) .. "a")
    h.errors("has 9 dims; tide takes at most 8", idx.read_idx, path)
    h.errors("cannot read '/tmp': not a regular file", idx.read_idx, "/tmp")
    h.errors("read_idx: expects a file path, got nil", idx.read_idx)
  end)
end)
