-- tide declares no libc function in LuaJIT's one global FFI namespace (the
-- progress bar's clock and terminal test are libtide's own), so a script
-- may declare libc's clock_gettime or isatty its own way after loading tide.
local tide = require "tide"
local ffi = require "ffi"
local progbar = require "tide.models.progbar"

describe("the FFI namespace after require 'tide'", function()
  it("leaves clock_gettime and isatty to the user's own declarations", function()
    assert.is_true(type(tide.Sequential) ~= "nil") -- the models floor is loaded
    ffi.cdef [[ typedef struct { long s; long ns; } user_timespec;
                int clock_gettime(int clk, user_timespec *tp);
                int isatty(int fd); ]]
    local ts = ffi.new("user_timespec")
    assert.are.equal(0, ffi.C.clock_gettime(1, ts))
    assert.is_true(tonumber(ts.s) >= 0)
    assert.is_true(ffi.C.isatty(-1) == 0)
  end)

  it("gives the progress bar a monotonic clock and a terminal test", function()
    local a = progbar.now()
    local b = progbar.now()
    assert.is_true(type(a) == "number" and b >= a)
    assert.is_false(progbar.isatty(-1))
  end)
end)
