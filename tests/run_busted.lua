-- tests/run_busted.lua — runs busted inside the tide program (so specs
-- exercise the real host and its paths); arguments are busted's own:
--   build/tide tests/run_busted.lua tests/spec/ops/math_spec.lua
package.path = "tests/support/?.lua;" .. package.path -- helpers shared by specs (tests/support/)
-- Files are not insulated unless asked: one tide library per Lua state, as in
-- real programs (insulation reloads modules, which would make second copies).
local insulation_given = false
for _, a in ipairs(arg) do
  if a:find("insulate", 1, true) then insulation_given = true end
end
if not insulation_given then table.insert(arg, 1, "--no-auto-insulate") end
-- Temporary folders and files the specs made through tests/support/tmp.lua
-- and left (a spec that failed before its teardown): removed, pass or fail
-- (busted ends a failed run with os.exit).
local function remove_temporaries()
  if package.loaded["tmp"] then package.loaded["tmp"].remove_made() end
end
local os_exit = os.exit
os.exit = function(...)
  remove_temporaries()
  return os_exit(...)
end
-- busted signals failures by raising a nil error under Lua 5.1; turn that
-- into a plain non-zero exit instead of a confusing traceback.
local ok, err = pcall(require "busted.runner", { standalone = false })
remove_temporaries()
if not ok then
  if err ~= nil then io.stderr:write(tostring(err), "\n") end
  os.exit(1)
end
