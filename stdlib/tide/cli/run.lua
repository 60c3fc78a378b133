-- stdlib/tide/cli/run.lua — `tide run dir --input file`: run a signature of
-- a SavedModel on inputs from .npy or safetensors files, and print the
-- outputs or write them (.npy, safetensors).
local tide = require "tide"
local binding = require "tide.binding"
local info = require "tide.cli.model_info"

local M = {}
local fmt = string.format

local function extension(path)
  local ext = path:match("%.([%w]+)$")
  return ext and ext:lower()
end

-- Read one input file as the tensors it holds: {name = tensor} (safetensors)
-- or a single tensor (.npy).
local function read_file(cli, path)
  if not cli.exists(path) then cli.usage_error(fmt("cannot open '%s': no such file", path)) end
  local ext = extension(path)
  local ok, res
  if ext == "npy" then
    ok, res = pcall(tide.io.read_npy, path)
  elseif ext == "safetensors" then
    ok, res = pcall(tide.safetensors.load_file, path)
  else
    cli.usage_error(fmt("'%s': inputs are .npy or .safetensors files", path))
  end
  if not ok then cli.fail(cli.first_line(res)) end
  return res
end

-- The inputs by name from the --input options (FILE or NAME=FILE).
local function gather_inputs(cli, given, in_specs, signame)
  local by_name, from = {}, {}
  local names = {}
  for i, s in ipairs(in_specs) do names[i] = s.name end
  local function add(name, t, path)
    if by_name[name] ~= nil then cli.usage_error(fmt("input '%s' is given twice (%s and %s)", name, from[name], path)) end
    by_name[name], from[name] = t, path
  end
  for _, arg in ipairs(given) do
    local name, path = arg:match("^([^=]+)=(.+)$")
    if name and extension(path) ~= "npy" then
      cli.usage_error(fmt("--input %s: a named input is a .npy file", arg))
    end
    path = path or arg
    local got = read_file(cli, path)
    if binding.istensor(got) then
      if not name then
        if #in_specs ~= 1 then
          cli.usage_error(fmt("signature '%s' takes %d inputs (%s): give NAME=FILE.npy for each, or one .safetensors " ..
            "file holding them by name", signame, #in_specs, table.concat(names, ", ")))
        end
        name = in_specs[1].name
      end
      add(name, got, path)
    else
      for k, t in pairs(got) do add(k, t, path) end
    end
  end
  local want = {}
  for _, s in ipairs(in_specs) do want[s.name] = true end
  local unknown = {}
  for k in pairs(by_name) do if not want[k] then unknown[#unknown + 1] = k end end
  table.sort(unknown)
  if #unknown > 0 then
    cli.usage_error(fmt("signature '%s' has no input named %s (its inputs: %s)", signame,
      table.concat(unknown, ", "), table.concat(names, ", ")))
  end
  local args = {}
  for i, s in ipairs(in_specs) do
    local t = by_name[s.name]
    if t == nil then cli.usage_error(fmt("input '%s' of signature '%s' is not given", s.name, signame)) end
    if not s:is_compatible_with(t) then
      cli.fail(fmt("input '%s' (from %s) is %s %s, but signature '%s' takes %s", s.name, from[s.name], t.dtype,
        require("tide.tracing.spec").dims_text(t.shape), signame, info.spec_text(s):gsub("^[^:]*: ", "")))
    end
    args[i] = t
  end
  return args
end

local function write_outputs(cli, path, names, outs)
  local ext = extension(path)
  local ok, err
  if ext == "npy" then
    if #names ~= 1 then
      cli.usage_error(fmt("the signature has %d outputs (%s): write them to a .safetensors file", #names,
        table.concat(names, ", ")))
    end
    ok, err = pcall(tide.io.write_npy, path, outs[1])
  elseif ext == "safetensors" then
    local map = {}
    for i, name in ipairs(names) do map[name] = outs[i] end
    ok, err = pcall(tide.safetensors.save_file, map, path)
  else
    cli.usage_error(fmt("'%s': outputs are written to .npy or .safetensors files", path))
  end
  if not ok then cli.fail(cli.first_line(err)) end
end

function M.run(args, cli)
  local opts, pos = cli.parse("run", args, {
    help = {}, input = { value = true, multi = true }, signature = { value = true }, output = { value = true },
  }, 1)
  if opts.help then return "help" end
  if not opts.input then cli.usage_error("--input FILE is required", true) end
  if opts.output then -- refuse a bad extension before the work
    local ext = extension(opts.output)
    if ext ~= "npy" and ext ~= "safetensors" then
      cli.usage_error(fmt("'%s': outputs are written to .npy or .safetensors files", opts.output))
    end
  end
  local loaded = info.load(cli, pos[1])
  local signame = info.pick(cli, loaded, opts.signature)
  local in_specs, out_specs = info.specs(loaded, signame)
  local names = {}
  for i, s in ipairs(out_specs) do names[i] = s.name end
  if opts.output and #names ~= 1 and extension(opts.output) == "npy" then
    cli.usage_error(fmt("signature '%s' has %d outputs (%s): write them to a .safetensors file", signame, #names,
      table.concat(names, ", ")))
  end
  local inputs = gather_inputs(cli, opts.input, in_specs, signame)
  -- a kernel that fails (an index out of range, a failed assert) is the work
  -- failing: its message in one line, without tide's file:line or traceback
  local function results(ok, ...)
    if not ok then cli.fail(cli.first_line((...))) end
    return { ... }
  end
  local outs = results(pcall(loaded.functions[signame], unpack(inputs, 1, #in_specs)))
  if opts.output then
    write_outputs(cli, opts.output, names, outs)
    return 0
  end
  for i, name in ipairs(names) do
    io.stdout:write(name, ": ", tostring(outs[i]), "\n")
  end
  return 0
end

return M
