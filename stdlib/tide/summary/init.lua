-- stdlib/tide/summary/init.lua — tide.summary (TF2's tf.summary): the face that hands on file
-- writers, the default writer and step, record_if, scalar/histogram/text/image and traced graphs.
--
--   local w = tide.summary.create_file_writer("logs/run1")
--   w:as_default(function()
--     for step = 0, 99 do tide.summary.scalar("loss", loss_at(step), {step = step}) end
--   end)
--
--   writer.lua     SummaryWriter (the C event-file writer) and create_file_writer
--   defaults.lua   the default writer and step, record_if (and writer:as_default)
--   summaries.lua  scalar, histogram, text, image (eager, or recorded in a traced function)
--   graph.lua      graph, trace_on, trace_off, trace_export
local writer = require "tide.summary.writer"
local defaults = require "tide.summary.defaults"
local summaries = require "tide.summary.summaries"
local graph = require "tide.summary.graph"

local M = {}

M.SummaryWriter, M.create_file_writer = writer.SummaryWriter, writer.create_file_writer

for _, name in ipairs { "get_default_writer", "flush", "record_if", "should_record_summaries", "_push_default",
                        "_pop_default", "experimental" } do
  M[name] = defaults[name]
end

for _, name in ipairs { "scalar", "histogram", "text", "image", "DEFAULT_BUCKET_COUNT" } do
  M[name] = summaries[name]
end

for _, name in ipairs { "graph", "trace_on", "trace_off", "trace_export" } do M[name] = graph[name] end

return M
