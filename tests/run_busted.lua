-- tests/run_busted.lua — runs busted inside the tide program (so specs
-- exercise the real host and its paths); arguments are busted's own.
package.path = "tests/support/?.lua;" .. package.path -- helpers shared by specs (tests/support/)
-- busted signals failures by raising a nil error under Lua 5.1; turn that
-- into a plain non-zero exit instead of a confusing traceback.
local ok, err = pcall(require "busted.runner", { standalone = false })
if not ok then
  if err ~= nil then io.stderr:write(tostring(err), "\n") end
  os.exit(1)
end
