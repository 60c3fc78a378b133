-- stdlib/tide/cli/init.lua — the tide program's subcommands (export, run,
-- summary): their options, --help texts and exit statuses. cli/main.c calls
-- main(command, args) and exits with what it returns: 0, 1 when the work
-- failed, 2 when the command line was wrong or a file is missing.
local file = require "tide.file"

local M = {}

local EXIT_FAILED, EXIT_USAGE = 1, 2

M.COMMANDS = { "export", "run", "summary" }
local IMPL = {
  export = function() return require "tide.cli.export" end,
  run = function() return require "tide.cli.run" end,
  summary = function() return require "tide.cli.summary" end,
}

local HELP = {
  export = [[
usage: tide export script.lua dir   (or: tide export script.lua model.onnx)
Run script.lua and write what it returns as a SavedModel in dir:
  a Keras model (tide.Sequential, tide.Model)  -> model:save(dir), with its config
  a traced function (tide.trace with an input_signature) or a concrete
  function                                     -> tide.saved_model.save(f, dir)
  a table with `signatures` (and `variables`)  -> tide.saved_model.save(t, dir)
With --format onnx, or a path ending .onnx, a Keras model or a traced function
is written as an ONNX file instead (tide.onnx.export).
An existing SavedModel in dir (or file) is replaced only once the new one is
complete.
Options:
  --format F  saved_model or onnx (default: onnx for a path ending .onnx)
  --opset N   the ONNX opset to write (13 to 21; default 17)
  --help      print this help]],
  run = [[
usage: tide run dir --input file [--signature name] [--output file]
Run a signature of the SavedModel in dir and print its outputs or write them.
Options:
  --input FILE        the inputs: a .npy file (the signature's one input) or a
                      .safetensors file (tensors matched to inputs by name)
  --input NAME=FILE   input NAME from a .npy file (repeat for each input)
  --signature NAME    the signature to run (default: serving_default, or the
                      model's only one)
  --output FILE       write the outputs instead of printing them: .npy (a
                      signature with one output) or .safetensors (by name)
  --help              print this help]],
  summary = [[
usage: tide summary dir
Print what the SavedModel in dir holds: each signature with its inputs' and
outputs' names, dtypes and shapes; its variables; and, for a Keras model
(model:save), its layers as model:summary() prints them.
Options:
  --help      print this help]],
}

-- An error of the command line (exit 2) or of the work (exit 1), raised
-- inside a command and turned into one line on stderr by main.
local Failure = {}
Failure.__index = Failure
Failure.__tostring = function(f) return f.message end

-- usage_error(message, true) adds "(tide CMD --help lists the options)": for
-- a wrong option or argument count, not for a missing file.
function M.usage_error(message, hint)
  error(setmetatable({ message = message, status = EXIT_USAGE, hint = hint }, Failure), 0)
end
function M.fail(message) error(setmetatable({ message = message, status = EXIT_FAILED }, Failure), 0) end

-- A tide error's message without its traceback and "file:line:" prefix, for one-line reports.
function M.first_line(err)
  local s = tostring(err):match("^[^\n]*")
  return (s:gsub("^[^:%s]+%.lua:%d+: ", ""))
end

-- Whether path exists (a file or a folder), whether it is a folder (tide.file).
M.exists, M.is_dir = file.exists, file.is_dir

-- Parse args (a list of strings) against `known` ({name = {value = true,
-- multi = true}}): returns the options by name (a list for multi) and the
-- positional arguments. "--name value" and "--name=value"; "--" ends options.
function M.parse(command, args, known, npositional)
  local opts, pos = {}, {}
  local i = 1
  while i <= #args do
    local a = args[i]
    if a == "--" then
      for j = i + 1, #args do pos[#pos + 1] = args[j] end
      break
    elseif a:sub(1, 2) == "--" and #a > 2 then
      local name, value = a:match("^%-%-([^=]+)=(.*)$")
      name = name or a:sub(3)
      local spec = known[name]
      if not spec then M.usage_error(string.format("unrecognized option '%s'", a), true) end
      if spec.value then
        if value == nil then
          i = i + 1
          value = args[i]
          if value == nil then M.usage_error(string.format("'%s' needs a value", a), true) end
        end
      elseif value ~= nil then
        M.usage_error(string.format("'--%s' takes no value", name), true)
      else
        value = true
      end
      if spec.multi then
        opts[name] = opts[name] or {}
        table.insert(opts[name], value)
      elseif opts[name] ~= nil then
        M.usage_error(string.format("'--%s' given twice", name), true)
      else
        opts[name] = value
      end
    elseif a:sub(1, 1) == "-" and #a > 1 then
      M.usage_error(string.format("unrecognized option '%s'", a), true)
    else
      pos[#pos + 1] = a
    end
    i = i + 1
  end
  if opts.help then return opts, pos end
  if #pos ~= npositional then
    M.usage_error(string.format("expects %d argument%s, got %d", npositional, npositional == 1 and "" or "s", #pos),
      true)
  end
  return opts, pos
end

-- main(command, args): run the subcommand; returns the exit status. Errors
-- of the command line and expected failures print one line on stderr;
-- anything else (a bug, an error inside a user's script) prints its traceback.
function M.main(command, args)
  local prog = "tide " .. command
  local impl = IMPL[command] and IMPL[command]()
  if not impl then
    io.stderr:write(string.format("tide: unknown command '%s' (tide --help lists the commands)\n", command))
    return EXIT_USAGE
  end
  local ok, res = xpcall(function()
    return impl.run(args, M)
  end, function(e)
    if getmetatable(e) == Failure then return e end
    return debug.traceback(tostring(e), 2)
  end)
  io.stdout:flush()
  if ok then
    if res == "help" then
      io.stdout:write(HELP[command], "\n")
      io.stdout:flush()
    end
    return 0
  end
  if getmetatable(res) == Failure then
    io.stderr:write(string.format("%s: %s%s\n", prog, res.message,
      res.hint and string.format(" (%s --help lists the options)", prog) or ""))
    return res.status
  end
  io.stderr:write(prog, ": ", tostring(res), "\n")
  return EXIT_FAILED
end

return M
