-- tests/spec/program/program_spec.lua — the `tide` program as a user runs it: lua's
-- command line (scripts, arg, -e, -l, -i, -v, -, stdin), errors, and the REPL
-- (piped through `tide -i`, and on a pseudo-terminal when `script` exists).
local program = require "tide_program"

local build, TIDE = program.build, program.path
local shell_quote, read_file, write_file = program.quote, program.read_file, program.write_file

local tmpdir -- one folder for the whole spec file

local function tmp(name) return tmpdir .. "/" .. name end

-- Run a shell command line; returns exit status, stdout, stderr.
local function sh(cmdline, stdin_text) return program.sh(tmpdir, cmdline, stdin_text) end

-- Run the tide program with these arguments (a list of strings).
local function tide(args, stdin_text)
  local parts = { shell_quote(TIDE) }
  for _, a in ipairs(args or {}) do parts[#parts + 1] = shell_quote(a) end
  return sh(table.concat(parts, " "), stdin_text)
end

local function has(s, needle) return s:find(needle, 1, true) ~= nil end

setup(function() tmpdir = program.make_tmpdir("program_spec") end)
teardown(function() program.remove_tmpdir(tmpdir) end)

describe("tide program", function()
  it("exists", function()
    assert.truthy(io.open(TIDE, "rb"), "no tide program at " .. TIDE)
  end)

  describe("scripts", function()
    it("sets arg and ... as lua does", function()
      local script = tmp("args.lua")
      write_file(script, [[
print("0=" .. arg[0], "1=" .. tostring(arg[1]), "2=" .. tostring(arg[2]), "n=" .. #arg)
print("-1=" .. arg[-1])
print("dots", select("#", ...), ...)
]])
      local rc, out, err = tide({ script, "a b", "-x" })
      assert.are.equal(0, rc, err)
      assert.truthy(has(out, "0=" .. script .. "\t1=a b\t2=-x\tn=2"), out)
      assert.truthy(has(out, "-1=" .. TIDE), out)
      assert.truthy(has(out, "dots\t2\ta b\t-x"), out)
    end)

    it("puts options before the script at negative indices", function()
      local script = tmp("neg.lua")
      write_file(script, "print(arg[-3], arg[-2], arg[-1], arg[0], arg[1])\n")
      local rc, out, err = tide({ "-e", "x = 1", script, "y" })
      assert.are.equal(0, rc, err)
      assert.are.equal(TIDE .. "\t-e\tx = 1\t" .. script .. "\ty\n", out)
    end)

    it("does not make tide a global in scripts", function()
      local rc, out = tide({ "-e", "print(tide == nil)" })
      assert.are.equal(0, rc)
      assert.are.equal("true\n", out)
    end)

    it("runs tide code", function()
      local script = tmp("tensor.lua")
      write_file(script, [[
local tide = require "tide"
local t = tide.tensor{1, 2, 3} * 2
print(table.concat(t:totable(), ","))
]])
      local rc, out, err = tide({ script })
      assert.are.equal(0, rc, err)
      assert.are.equal("2,4,6\n", out)
    end)

    it("skips a #! first line", function()
      local script = tmp("shebang.lua")
      write_file(script, "#!/usr/bin/env tide\nprint('ran', 1 + 1)\n")
      local rc, out, err = tide({ script })
      assert.are.equal(0, rc, err)
      assert.are.equal("ran\t2\n", out)
    end)

    it("returns the status given to os.exit", function()
      local rc = tide({ "-e", "os.exit(3)" })
      assert.are.equal(3, rc)
      rc = tide({ "-e", "os.exit(true)" })
      assert.are.equal(0, rc)
    end)

    it("treats the arguments after -- as the script and its arguments", function()
      local script = tmp("dash.lua")
      write_file(script, "print(...)\n")
      local rc, out = tide({ "--", script, "-v", "--" })
      assert.are.equal(0, rc)
      assert.are.equal("-v\t--\n", out)
    end)
  end)

  describe("errors", function()
    it("prints a runtime error with a traceback and exits non-zero", function()
      local script = tmp("fails.lua")
      write_file(script, [[
print("before")
local function inner() error("it broke") end
inner()
]])
      local rc, out, err = tide({ script })
      assert.are_not.equal(0, rc)
      assert.are.equal("before\n", out)
      assert.truthy(has(err, script .. ":2: it broke"), err)
      assert.truthy(has(err, "stack traceback:"), err)
      assert.truthy(has(err, "in function 'inner'"), err)
      assert.truthy(has(err, script .. ":3: in main chunk"), err)
    end)

    it("prints tide's own errors with the user's line", function()
      local script = tmp("shape.lua")
      write_file(script, "local tide = require 'tide'\nlocal x = tide.tensor{1, 2} + tide.tensor{1, 2, 3}\n")
      local rc, _, err = tide({ script })
      assert.are_not.equal(0, rc)
      assert.truthy(has(err, script .. ":2:"), err)
      assert.truthy(has(err, "add"), err)
      assert.truthy(has(err, "stack traceback:"), err)
    end)

    it("reports a syntax error and runs nothing", function()
      local script = tmp("syntax.lua")
      write_file(script, "print('ran')\nlocal x = = 2\n")
      local rc, out, err = tide({ script })
      assert.are_not.equal(0, rc)
      assert.are.equal("", out)
      assert.truthy(has(err, script .. ":2:"), err)
      assert.truthy(has(err, "unexpected symbol"), err)
    end)

    it("says clearly, on one line, that a script file is missing (exit status 2)", function()
      local rc, out, err = tide({ tmp("no_such_script.lua") })
      assert.are.equal(2, rc)
      assert.are.equal("", out)
      assert.are.equal(1, select(2, err:gsub("\n", "")), err)
      assert.truthy(has(err, "cannot open " .. tmp("no_such_script.lua")), err)
      assert.truthy(has(err, "No such file"), err)
    end)

    it("reports error objects that are not strings", function()
      local rc, _, err = tide({ "-e", "error({})" })
      assert.are_not.equal(0, rc)
      assert.truthy(has(err, "error object is a table value"), err)
      rc, _, err = tide({ "-e", "error(setmetatable({}, {__tostring = function() return 'custom!' end}))" })
      assert.are_not.equal(0, rc)
      assert.truthy(has(err, "custom!"), err)
    end)

    it("rejects unknown options and -e without code in one line, exit status 2", function()
      for _, case in ipairs {
        { { "-z" }, "unrecognized option '-z'" },
        { { "-e" }, "'-e' needs an argument" },
        { { "-vx" }, "unrecognized option '-vx'" },
        { { "--bogus" }, "unrecognized option '--bogus'" },
        { { "-e", "print(1)", "--nope" }, "unrecognized option '--nope'" },
      } do
        local rc, out, err = tide(case[1])
        assert.are.equal(2, rc, table.concat(case[1], " "))
        assert.are.equal("", out)
        assert.truthy(has(err, case[2]), err)
        assert.truthy(has(err, "--help lists the options"), err)
        assert.are.equal(1, select(2, err:gsub("\n", "")), err)
      end
    end)

    it("exits with status 1 and a traceback when the script fails", function()
      local script = tmp("fails_status.lua")
      write_file(script, "local function f() error('broken') end\nf()\n")
      local rc, _, err = tide({ script })
      assert.are.equal(1, rc)
      assert.truthy(has(err, "broken"), err)
      assert.truthy(has(err, "stack traceback:"), err)
      rc = tide({ "-e", "error('x')" })
      assert.are.equal(1, rc)
    end)
  end)

  describe("tide's options", function()
    it("--help prints the options on stdout and runs nothing", function()
      local rc, out, err = tide({ "--help" }, "print('stdin ran')\n")
      assert.are.equal(0, rc, err)
      assert.truthy(out:match("^usage: "), out)
      for _, opt in ipairs { "-e code", "-i", "-v", "--threads N", "--device NAME", "--help" } do
        assert.truthy(has(out, opt), opt)
      end
      assert.falsy(has(out, "stdin ran"))
    end)

    it("--threads N sets the thread count before anything runs", function()
      local rc, out, err = tide({ "--threads", "3", "-e", "print(require('tide').config.get_num_threads())" })
      assert.are.equal(0, rc, err)
      assert.are.equal("3\n", out)
      rc, out = tide({ "--threads=1", "-e", "print(require('tide').config.get_num_threads())" })
      assert.are.equal(0, rc)
      assert.are.equal("1\n", out)
    end)

    it("--threads refuses what is not a whole number >= 1", function()
      for _, v in ipairs { "0", "-2", "two", "1.5", "" } do
        local rc, _, err = tide({ "--threads", v, "-e", "print(1)" })
        assert.are.equal(2, rc, v)
        assert.truthy(has(err, "--threads needs a whole number"), err)
      end
      local rc, _, err = tide({ "--threads" })
      assert.are.equal(2, rc)
      assert.truthy(has(err, "'--threads' needs a value"), err)
    end)

    it("--device cpu runs; cuda says why it cannot be the default here; others are refused", function()
      local rc, out = tide({ "--device", "cpu", "-e", "print(require('tide').tensor{1} + 1)" })
      assert.are.equal(0, rc)
      assert.truthy(has(out, "[2]"), out)
      local err
      rc, out, err = tide({ "--device=cuda", "-e", "print('ran')" })
      assert.are.equal(2, rc)
      assert.are.equal("", out)
      assert.truthy(has(err, "--device cuda: no CUDA device visible") or has(err, "not built yet"), err)
      rc, _, err = tide({ "--device", "tpu" })
      assert.are.equal(2, rc)
      assert.truthy(has(err, "--device must be cpu or cuda, got 'tpu'"), err)
    end)

    it("keeps tide's options at negative indices of arg", function()
      local script = tmp("opts_arg.lua")
      write_file(script, "print(arg[-2], arg[-1], arg[0], arg[1])\n")
      local rc, out, err = tide({ "--threads", "2", script, "a" })
      assert.are.equal(0, rc, err)
      assert.are.equal("--threads\t2\t" .. script .. "\ta\n", out)
    end)
  end)

  describe("-e, -l and -v", function()
    it("runs several -e in order, then the script", function()
      local script = tmp("after_e.lua")
      write_file(script, "print('script', x)\n")
      local rc, out, err = tide({ "-e", "x = 1 print('first')", "-e", "x = x + 1 print('second', x)", script })
      assert.are.equal(0, rc, err)
      assert.are.equal("first\nsecond\t2\nscript\t2\n", out)
    end)

    it("accepts -eCODE in one argument", function()
      local rc, out = tide({ "-eprint(6*7)" })
      assert.are.equal(0, rc)
      assert.are.equal("42\n", out)
    end)

    it("stops at the first failing -e", function()
      local rc, out, err = tide({ "-e", "print('one')", "-e", "error('two')", "-e", "print('three')" })
      assert.are_not.equal(0, rc)
      assert.are.equal("one\n", out)
      assert.truthy(has(err, "(command line):1: two"), err)
      assert.truthy(has(err, "stack traceback:"), err)
    end)

    it("reports a syntax error in -e", function()
      local rc, _, err = tide({ "-e", "x =" })
      assert.are_not.equal(0, rc)
      assert.truthy(has(err, "(command line):1:"), err)
    end)

    it("loads a library into a global with -l", function()
      local rc, out, err = tide({ "-l", "tide", "-e", "print(tide.tensor{1, 2}:totable()[2])" })
      assert.are.equal(0, rc, err)
      assert.are.equal("2\n", out)
      rc, _, err = tide({ "-l", "no_such_module_xyz" })
      assert.are_not.equal(0, rc)
      assert.truthy(has(err, "no_such_module_xyz"), err)
    end)

    it("prints the version with -v and nothing else runs", function()
      local rc, out = tide({ "-v" }, "print('stdin ran')\n")
      assert.are.equal(0, rc)
      assert.truthy(out:match("^tide %d+%.%d+%.%d+"), out)
      assert.falsy(has(out, "stdin ran"))
    end)

    it("prints the version before running a script", function()
      local rc, out = tide({ "-v", "-e", "print('code')" })
      assert.are.equal(0, rc)
      assert.truthy(out:match("^tide [^\n]*\ncode\n$"), out)
    end)
  end)

  describe("standard input", function()
    it("runs stdin as a script with no arguments when it is not a terminal", function()
      local rc, out, err = tide({}, "print('from stdin', ...)\nprint(1 + 1)\n")
      assert.are.equal(0, rc, err)
      assert.are.equal("from stdin\n2\n", out)
    end)

    it("runs stdin for '-' with the arguments after it", function()
      local rc, out, err = tide({ "-", "p", "q" }, "print(arg[0], ...)\n")
      assert.are.equal(0, rc, err)
      assert.are.equal("-\tp\tq\n", out)
    end)

    it("fails on an error in stdin", function()
      local rc, _, err = tide({ "-" }, "\nerror('from stdin')\n")
      assert.are_not.equal(0, rc)
      assert.truthy(has(err, "stdin:2: from stdin"), err)
    end)

    it("treats '-' after -- as a file name", function()
      local rc, _, err = sh("cd " .. shell_quote(tmpdir) .. " && " .. shell_quote(TIDE) .. " -- -", "print('no')\n")
      assert.are_not.equal(0, rc)
      assert.truthy(has(err, "cannot open -"), err)
    end)
  end)
end)

describe("tide REPL (piped)", function()
  -- The REPL reads plain lines without prompts when stdin is not a terminal.
  local function repl(input, args)
    local a = { "-i" }
    for _, v in ipairs(args or {}) do a[#a + 1] = v end
    return tide(a, input)
  end

  it("prints expressions and prints nothing else", function()
    local rc, out, err = repl("1+1\n'text'\n1, nil, 3\n")
    assert.are.equal(0, rc, err)
    assert.are.equal("2\ntext\n1\tnil\t3\n", out)
    assert.are.equal("", err)
  end)

  it("prints tensors", function()
    local rc, out, err = repl("tide.tensor{1, 2, 3}\n")
    assert.are.equal(0, rc, err)
    assert.truthy(has(out, "tide.Tensor("), out)
    assert.truthy(has(out, "[1 2 3]"), out)
    assert.truthy(has(out, "int32"), out)
  end)

  it("pretty-prints tables, to a depth", function()
    local rc, out, err = repl("{1, 'two', {three = 3, four = {5, {6}}}}\n")
    assert.are.equal(0, rc, err)
    assert.are.equal('{1, "two", {four = {...}, three = 3}}\n', out)
  end)

  it("%time runs a chunk, prints its result and the wall time", function()
    local rc, out, err = repl("%time 6 * 7\n%time local t = 0 for i = 1, 10 do t = t + i end\n%time\nt\n")
    assert.are.equal(0, rc, err)
    assert.truthy(out:match("^42\nwall time: %d+%.%d+ ms\nwall time: %d+%.%d+ ms\n"), out)
    assert.truthy(has(out, "\n55\n"), out) -- the timed chunk's locals are kept too
  end)

  it("%time continues an incomplete chunk; an unknown %command is an error", function()
    local rc, out, err = repl("%time for i = 1, 2 do\nprint('i' .. i)\nend\n%nope 1\n'next'\n")
    assert.are.equal(0, rc, err)
    assert.truthy(out:match("^i1\ni2\nwall time: [%d.]+ ms\nnext\n$"), out)
    assert.truthy(has(err, "unknown command '%nope'"), err)
  end)

  it("has help(x) as a global", function()
    local rc, out, err = repl("help(tide.matmul)\n")
    assert.are.equal(0, rc, err)
    assert.truthy(has(out, "function M.matmul(a, b, ...)"), out)
    assert.truthy(has(out, "as tf.linalg.matmul"), out)
  end)

  it("prints no colors through a pipe", function()
    local rc, out, err = repl("1\nerror('x')\n")
    assert.are.equal(0, rc)
    assert.falsy(has(out .. err, "\27["), out .. err)
  end)

  it("has tide preloaded as a global", function()
    local rc, out = repl("type(tide)\ntide.tensor\n")
    assert.are.equal(0, rc)
    assert.truthy(out:match("^table\nfunction"), out)
  end)

  it("continues a multi-line chunk until it is complete", function()
    local rc, out, err = repl([[
function f(a,
           b)
  local s = a + b
  return s * 2
end
f(1, 2)
local t = {
  10,
  20,
}
#t
]])
    assert.are.equal(0, rc, err)
    assert.are.equal("6\n2\n", out)
  end)

  it("keeps top-level locals from one line to the next", function()
    local rc, out, err = repl("local x = 5\nx + 1\nlocal a, b = tide.tensor{1, 2}, 10\nb\nlocal function sq(v) return v * v end\nsq(b)\n")
    assert.are.equal(0, rc, err)
    assert.are.equal("6\n10\n100\n", out)
  end)

  it("undoes what a failed line left set (an interrupt can cut tide's own cleanup short)", function()
    -- a way out cut short leaves a tape recording with its undo action pending
    local rc, out = repl("local s, r = require 'tide.scope', require 'tide.tape_recorder'; " ..
      "local t = {_paused = false, _tracked = {}, _keep = function() end}; s.push(r.pop, t); r.push(t); " ..
      "assert(r.active); error('cut short')\n" ..
      "require('tide.tape_recorder').active, #require('tide.tape_recorder').tapes, require('tide.scope').n\n")
    assert.are.equal(0, rc)
    assert.are.equal("false\t0\t0\n", out)
  end)

  it("prints an error and goes on", function()
    local rc, out, err = repl("error('boom')\nprint('still here')\ntide.tensor{1, 2} + tide.tensor{1, 2, 3}\n2 + 2\n")
    assert.are.equal(0, rc)
    assert.are.equal("still here\n4\n", out)
    assert.truthy(has(err, "stdin:1: boom"), err)
    assert.truthy(has(err, "stack traceback:"), err)
    assert.truthy(has(err, "add"), err)
  end)

  it("keeps the line of an error inside an expression", function()
    local rc, out, err = repl("local t = {}\nt.a.b\n1 -- a comment\n")
    assert.are.equal(0, rc)
    assert.are.equal("1\n", out)
    assert.truthy(has(err, "stdin:1: attempt to index field 'a'"), err)
  end)

  it("prints syntax errors and goes on", function()
    local rc, out, err = repl("x = = 1\n3\n")
    assert.are.equal(0, rc)
    assert.are.equal("3\n", out)
    assert.truthy(has(err, "stdin:1:"), err)
  end)

  it("accepts return, =expr and statements", function()
    local rc, out, err = repl("return 7, 8\n=9\ny = 4\ny\nprint('p')\n")
    assert.are.equal(0, rc, err)
    assert.are.equal("7\t8\n9\n4\np\n", out)
  end)

  it("ends quietly in the middle of an unfinished chunk", function()
    local rc, out, err = repl("1\nfunction g()\n")
    assert.are.equal(0, rc, err)
    assert.are.equal("1\n", out)
  end)

  it("sees what a script or -e left behind", function()
    local script = tmp("before_repl.lua")
    write_file(script, "from_script = 41\n")
    local rc, out, err = repl("from_script + 1\nfrom_e\n", { "-e", "from_e = 'e'", script })
    assert.are.equal(0, rc, err)
    assert.are.equal("42\ne\n", out)
  end)

  -- SIGINT from the shell while a chunk runs: the run stops with "interrupted!"
  -- and the next line is read. "started" on stdout says the loop is running.
  local function interrupt(loop_line)
    write_file(tmp("loop_in.txt"), loop_line .. "\nprint('after')\n")
    local cmd = table.concat({
      shell_quote(TIDE) .. " -i <" .. tmp("loop_in.txt") .. " >" .. tmp("loop_out.txt") .. " 2>" .. tmp("loop_err.txt") .. " &",
      "pid=$!",
      "n=0; while ! grep -q started " .. tmp("loop_out.txt") .. " 2>/dev/null; do sleep 0.05; n=$((n+1)); [ $n -gt 600 ] && break; done",
      "sleep 0.2; kill -INT $pid",
      "n=0; while kill -0 $pid 2>/dev/null; do sleep 0.05; n=$((n+1)); [ $n -gt 200 ] && kill -KILL $pid; done",
      "wait $pid; echo $?",
    }, "\n")
    local p = io.popen(cmd)
    local rc = tonumber(p:read("*a"):match("%d+"))
    p:close()
    return rc, read_file(tmp("loop_out.txt")) or "", read_file(tmp("loop_err.txt")) or ""
  end

  it("interrupts a running loop on SIGINT and goes on", function()
    local rc, out, err = interrupt("print('started') io.stdout:flush() local n = 0 while true do n = n + 1 end")
    assert.are.equal(0, rc, err)
    assert.are.equal("started\nafter\n", out)
    assert.truthy(has(err, "stdin:1: interrupted!"), err)
  end)

  it("interrupts a loop of tensor ops on SIGINT", function()
    local rc, out, err = interrupt(
      "local x = tide.tensor({1.5, 2.5}) print('started') io.stdout:flush() for i = 1, 1e12 do local t = x + 1 end")
    assert.are.equal(0, rc, err)
    assert.are.equal("started\nafter\n", out)
    assert.truthy(has(err, "interrupted"), err)
  end)
end)

describe("tide REPL (terminal)", function()
  -- A pseudo-terminal through util-linux `script`: readline, prompts, Ctrl-C
  -- (the byte \003 becomes SIGINT in the terminal), and ~/.tide_history.
  -- (util-linux's `script` is Debian's bsdutils, which tools/deps.sh installs.)
  local have_script = os.execute("command -v script >/dev/null 2>&1")
  have_script = have_script == 0 or have_script == true

  local driver = [=[
TIDE=$1; H=$2
out=$H/pty_out.txt; fifo=$H/pty_in.fifo
rm -f "$fifo" "$out"; mkfifo "$fifo" || exit 90
HOME=$H TERM=dumb script -qfec "$TIDE" /dev/null < "$fifo" > "$out" 2>&1 &
spid=$!
exec 3>"$fifo"
wait_for() { n=0; while ! grep -q -- "$1" "$out" 2>/dev/null; do sleep 0.05; n=$((n+1)); if [ $n -gt 600 ]; then echo "TIMEOUT waiting for $1"; kill $spid; exit 91; fi; done; }
wait_for 'tide> '
printf '1+1\n' >&3; wait_for '^2'
printf 'abandoned_line' >&3; sleep 0.3; printf '\003' >&3; sleep 0.3
printf 'local v = 40\n' >&3; sleep 0.2
printf 'v + 2\n' >&3; wait_for '^42'
printf 'function f()\n' >&3; sleep 0.2; printf '\003' >&3; sleep 0.3
printf 'f == nil\n' >&3; wait_for '^true'
printf 'print("looping") while true do end\n' >&3; wait_for '^looping'; sleep 0.3; printf '\003' >&3
wait_for 'interrupted!'
printf '6*7+1\n' >&3; wait_for '^43'
printf '\004' >&3
exec 3>&-
wait $spid
echo "rc=$?"
]=]

  it("edits lines, abandons a line on Ctrl-C, interrupts a loop, keeps history", function()
    assert(have_script, "util-linux `script` is missing: install Debian's bsdutils (make deps does)")
    local home = tmp("pty_home")
    os.execute("mkdir -p " .. shell_quote(home))
    write_file(tmp("pty.sh"), driver)
    local p = io.popen("sh " .. shell_quote(tmp("pty.sh")) .. " " .. shell_quote(TIDE) .. " " .. shell_quote(home) .. " 2>&1")
    local result = p:read("*a")
    p:close()
    assert.truthy(has(result, "rc=0"), result)
    local screen = (read_file(home .. "/pty_out.txt") or ""):gsub("\r", "")
    assert.truthy(has(screen, "tide> 1+1\n2\n"), screen)
    assert.truthy(has(screen, "abandoned_line^C\n"), screen)
    assert.truthy(has(screen, "\n42\n"), screen)
    assert.truthy(has(screen, "\ntrue\n"), screen)              -- the abandoned `function f()` never ran
    assert.truthy(has(screen, "stdin:1: interrupted!"), screen)
    assert.truthy(has(screen, "\n43\n"), screen)
    local history = read_file(home .. "/.tide_history") or ""
    assert.truthy(has(history, "1+1\n"), history)
    assert.truthy(has(history, "v + 2\n"), history)
    assert.falsy(has(history, "abandoned_line"), history)
  end)
end)

describe("embedding example (examples/embed/sandboxed_script.c)", function()
  it("builds and runs", function()
    local rc, out, err = sh(shell_quote(build .. "/examples/sandboxed_script"))
    assert.are.equal(0, rc, err)
    assert.truthy(has(out, "frame 0: score = 3 (weighted 0 -0 2)"), out)
    assert.truthy(has(out, "frame 1: score = 2.5 (weighted 0.5 -2 2)"), out)
    assert.truthy(has(out, "stopped: runaway:1: time budget of 50 ms exceeded"), out)
    assert.truthy(has(out, "refused: escape:1: attempt to index global 'io'"), out)
  end)
end)
