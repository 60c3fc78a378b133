-- tests/sh/distribute_faults.lua — workers that fail, for
-- tests/sh/test_distribute_faults.sh (run under mpirun -np 2).
--   build/tide tests/sh/distribute_faults.lua MODE TIMEOUT DIR
-- Rank 0 (the survivor) makes collectives and writes DIR/started; rank 1
-- misbehaves as MODE says:
--   kill         SIGKILLs itself in the middle of a run of all-reduces
--   stuck        sleeps, never calling the all-reduce rank 0 waits in
--   stuck-bcast, stuck-barrier: the same for a broadcast and a barrier
--   error        raises a Lua error (rank 0's timeout is long: the job must end by the error, not by it)
--   caught       stuck; rank 0 catches the timeout, tries another
--                collective (refused at once) and returns normally: exit must still end the job
--   exit-stuck   stuck; rank 0 makes no collective and ends its script: the meeting at exit times out
--   early-exit   ends its script at once; rank 0 makes an all-reduce, which meets rank 1's barrier at
--                exit: it must fail naming both collectives, never return a sum rank 1 did not add to
local tide = require "tide"
local ffi = require "ffi"
local dist = tide.distribute

ffi.cdef [[ int kill(int pid, int sig); int getpid(void); unsigned int sleep(unsigned int s); ]]

local mode, timeout, dir = arg[1], tonumber(arg[2]), arg[3] -- timeout "": TIDE_DIST_TIMEOUT's
local strategy = dist.MultiWorkerMirroredStrategy { timeout = timeout }
local rank = strategy.worker_index
assert(strategy.num_replicas_in_sync == 2, "run under mpirun -np 2")

-- Both meet once, so the failure comes after a working start.
local one = dist.all_reduce_sum(tide.tensor({ 1, 2, 3 }, "float32")):totable()
assert(one[3] == 6, "the first all-reduce gave " .. tostring(one[3]))

local function mark(name)
  local f = assert(io.open(dir .. "/" .. name .. rank, "w"))
  f:write("1\n")
  f:close()
end

if rank == 1 then
  if mode == "kill" then
    for i = 1, 5 do dist.all_reduce_sum(tide.ones { 1000 }) end
    mark("started")
    ffi.C.kill(ffi.C.getpid(), 9)
  elseif mode == "error" then
    mark("started")
    error("worker 1 failed on purpose")
  elseif mode == "early-exit" then
    mark("started")
    return -- a normal end: its meeting at exit is the next collective
  else
    mark("started")
    ffi.C.sleep(600) -- alive, never answering (mpirun ends it with the job)
  end
  os.exit(3) -- not reached: the test fails if this process ends by itself
end

mark("started")
if mode == "kill" then
  for i = 1, 1000000 do dist.all_reduce_sum(tide.ones { 1000 }) end
elseif mode == "stuck-bcast" then
  dist.broadcast(tide.ones { 10 }, 1) -- from rank 1, so rank 0 must hear from it
elseif mode == "stuck-barrier" then
  dist.barrier()
elseif mode == "caught" then
  local ok, err = pcall(dist.all_reduce_sum, tide.ones { 10 })
  assert(not ok, "the all-reduce with a stuck worker returned")
  io.stderr:write("caught: " .. tostring(err):match("[^\n]*") .. "\n")
  local ok2, err2 = pcall(dist.barrier)
  assert(not ok2, "a collective after a failed one was made")
  io.stderr:write("then: " .. tostring(err2):match("[^\n]*") .. "\n")
  return -- a normal end: exit must still end the job (MPI_Abort), not wait in MPI_Finalize
elseif mode == "exit-stuck" then
  return
elseif mode == "early-exit" then
  local ok, err = pcall(dist.all_reduce_sum, tide.ones { 10 })
  if ok then error("the all-reduce returned " .. tostring(err:totable()[1]) .. " with worker 1 gone") end
  io.stderr:write("refused: " .. tostring(err):match("[^\n]*") .. "\n")
  return
else -- stuck, error
  dist.all_reduce_sum(tide.ones { 10 })
end
os.exit(4) -- not reached
