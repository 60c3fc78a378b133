-- The library's bytecode loader (vm/bytecode.c): tide's own modules come from
-- build/lj/ when the bytecode matches the source, and from the source when it
-- is stale, compiled elsewhere, stripped, damaged, or not tide's.
local tide = require "tide"
local tmp = require "tmp"

local searcher = package.loaders[2]

local function write(path, text)
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
end

describe("the bytecode loader", function()
  it("loads tide's modules from build/lj in this tree, and nothing else", function()
    assert.are.equal("function", type(searcher("tide.args")))
    assert.is_nil(searcher("tide.no_such_module"))
    assert.is_nil(searcher("busted")) -- found on package.path, but not under tide's folders
    -- what it loads keeps the source's name, so errors and tracebacks read the same
    local info = debug.getinfo(searcher("tide.args"), "S")
    assert.truthy(info.source:match("^@.*/stdlib/tide/args%.lua$"), info.source)
    local ok, err = pcall(tide.matmul, tide.ones{2, 3}, tide.ones{2, 3})
    assert.is_false(ok)
    assert.truthy(tostring(err):find("inner dimensions", 1, true))
  end)

  -- The same searcher pointed at a scratch tree (its two roots are upvalues).
  it("uses bytecode only when it is the source's, current and whole", function()
    local dir = tmp.dir("bytecode")
    local root, bc_root = debug.getupvalue(searcher, 1), nil
    local _, saved_bc = debug.getupvalue(searcher, 2)
    local _, saved_root = debug.getupvalue(searcher, 1)
    local saved_path = package.path
    local ok, err = pcall(function()
      debug.setupvalue(searcher, 1, dir .. "/")
      debug.setupvalue(searcher, 2, dir .. "/lj/")
      package.path = dir .. "/?.lua;" .. saved_path
      os.execute("mkdir -p " .. dir .. "/lj")
      local src, bc = dir .. "/m.lua", dir .. "/lj/m.lua"
      write(src, "return 'from source'")
      -- no bytecode: nothing (the next searcher parses the source)
      assert.is_nil(searcher("m"))
      -- bytecode of this very file, newer than it: loaded
      write(bc, string.dump(assert(loadstring("return 'from bytecode'", "@" .. src))))
      os.execute("touch -d '2000-01-01' " .. src)
      assert.are.equal("from bytecode", searcher("m")())
      -- the source edited after the bytecode was made: the source wins
      os.execute("touch -d '2030-01-01' " .. src)
      assert.is_nil(searcher("m"))
      os.execute("touch -d '2000-01-01' " .. src)
      -- compiled from another file (a build folder copied from another tree)
      write(bc, string.dump(assert(loadstring("return 'elsewhere'", "@/elsewhere/m.lua"))))
      assert.is_nil(searcher("m"))
      -- stripped of its debug information (no name to check)
      write(bc, string.dump(assert(loadstring("return 'stripped'", "@" .. src)), true))
      assert.is_nil(searcher("m"))
      -- damaged: cut short, or not bytecode at all
      local whole = string.dump(assert(loadstring("return 'x'", "@" .. src)))
      write(bc, whole:sub(1, #whole - 5))
      assert.is_nil(searcher("m"))
      write(bc, "return 'text, not bytecode'")
      assert.is_nil(searcher("m"))
      write(bc, "")
      assert.is_nil(searcher("m"))
    end)
    debug.setupvalue(searcher, 1, saved_root)
    debug.setupvalue(searcher, 2, saved_bc)
    package.path = saved_path
    tmp.remove(dir)
    assert(ok, err)
    assert.are.equal(root, debug.getupvalue(searcher, 1))
  end)
end)
