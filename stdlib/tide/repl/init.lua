-- stdlib/tide/repl/init.lua — the Lua side of the tide REPL (repl/repl.c):
-- completion, printing results, help(x). Loaded only by the REPL.
local complete = require "tide.repl.complete"
local show = require "tide.repl.show"
local help = require "tide.repl.help"

return {
  complete = complete.complete,
  show = show.show,
  show_all = show.show_all,
  help = help.help,
  help_text = help.help_text,
}
