-- tests/support/pty.lua — drive a program on a pseudo-terminal, as a user at
-- a terminal would: spawn it with the terminal as its controlling tty, type
-- bytes (Ctrl-C included), and wait for text with a timeout (never fixed sleeps).
local ffi = require "ffi"
local binding = require "tide.binding"

-- Our own names for libc's functions (asm labels), so these declarations
-- never clash with another in the FFI's one namespace.
ffi.cdef [[
struct tide_pty_pollfd { int fd; short events; short revents; };
struct tide_pty_winsize { unsigned short rows, cols, xpixel, ypixel; };
int tide_pty_openpt(int flags) __asm__("posix_openpt");
int tide_pty_grantpt(int fd) __asm__("grantpt");
int tide_pty_unlockpt(int fd) __asm__("unlockpt");
char *tide_pty_ptsname(int fd) __asm__("ptsname");
long tide_pty_read(int fd, void *buf, size_t n) __asm__("read");
long tide_pty_write(int fd, const void *buf, size_t n) __asm__("write");
int tide_pty_poll(struct tide_pty_pollfd *fds, unsigned long n, int timeout_ms) __asm__("poll");
int tide_pty_close(int fd) __asm__("close");
int tide_pty_ioctl(int fd, unsigned long request, void *arg) __asm__("ioctl");
]]
local C = ffi.C
local O_RDWR, O_NOCTTY, O_CLOEXEC, POLLIN, TIOCSWINSZ = 2, 256, 0x80000, 1, 0x5414

local M = {}
M.DEFAULT_TIMEOUT = 20 -- seconds; expect fails past it (a loaded machine is slow, not stuck)

local function now() return binding.C.tide_monotonic_seconds() end

local function quote(s) return "'" .. tostring(s):gsub("'", [['\'']]) .. "'" end

local Pty = {}
Pty.__index = Pty

-- spawn(argv, env, dir) -> a Pty running argv (a list: program and
-- arguments) in a new session whose controlling terminal is the pty, 80x24,
-- with the environment variables of `env` set (false unsets one); `dir` is a
-- scratch folder for the exit status. Ctrl-C typed there signals the program.
function M.spawn(argv, env, dir)
  -- O_CLOEXEC: the program must not inherit our end, or it would keep its own
  -- terminal alive (no hangup) and outlive a spec that failed before quitting it.
  local fd = C.tide_pty_openpt(O_RDWR + O_NOCTTY + O_CLOEXEC)
  assert(fd >= 0, "posix_openpt failed")
  assert(C.tide_pty_grantpt(fd) == 0 and C.tide_pty_unlockpt(fd) == 0, "grantpt/unlockpt failed")
  local slave = ffi.string(C.tide_pty_ptsname(fd))
  local ws = ffi.new("struct tide_pty_winsize", 24, 80, 0, 0)
  C.tide_pty_ioctl(fd, TIOCSWINSZ, ws)
  local self = setmetatable({ fd = fd, out = "", pos = 1, rc_file = dir .. "/pty_rc_" .. fd, closed = false }, Pty)
  os.remove(self.rc_file)
  local sets = {}
  for k, v in pairs(env or {}) do
    if v == false then sets[#sets + 1] = "unset " .. k .. ";"
    else sets[#sets + 1] = "export " .. k .. "=" .. quote(v) .. ";" end
  end
  local cmd = {}
  for i, a in ipairs(argv) do cmd[i] = quote(a) end
  -- sh leads the new session and opens the pty first, so it becomes the
  -- controlling terminal; the program runs in sh's (foreground) process
  -- group. sh ignores the Ctrl-C meant for the program (its trap resets to
  -- the default in the child) and writes the program's exit status.
  local script = table.concat(sets, " ") .. " exec 0<>" .. quote(slave) .. " 1>&0 2>&0; trap : INT; "
    .. table.concat(cmd, " ") .. "; echo $? > " .. quote(self.rc_file)
  os.execute("setsid sh -c " .. quote(script) .. " </dev/null >/dev/null 2>&1 &")
  return self
end

-- Read what the program wrote, waiting at most `timeout` seconds for some;
-- false when the terminal is closed (every process holding it is gone).
function Pty:pump(timeout)
  if self.closed then return false end
  local pfd = ffi.new("struct tide_pty_pollfd[1]")
  pfd[0].fd, pfd[0].events = self.fd, POLLIN
  local r = C.tide_pty_poll(pfd, 1, math.max(0, math.floor(timeout * 1000)))
  if r <= 0 then return true end
  local buf = ffi.new("char[4096]")
  local n = C.tide_pty_read(self.fd, buf, 4096)
  if n <= 0 then -- EIO: the other side is closed
    self.closed = true
    return false
  end
  self.out = self.out .. ffi.string(buf, n)
  return true
end

-- The screen text so far without terminal control sequences and carriage returns.
function M.plain(s)
  s = s:gsub("\27%[[%d;?]*[%a~@]", ""):gsub("\27[%(%)][%w]", ""):gsub("\27[=>]", ""):gsub("\r", "")
  s = s:gsub("[\1\2\7]", "")
  return s
end

function Pty:text() return M.plain(self.out) end

-- Wait until `needle` (plain text) appears after the last match; returns the
-- text up to it. Fails, showing the screen, after `timeout` seconds.
function Pty:expect(needle, timeout)
  local deadline = now() + (timeout or M.DEFAULT_TIMEOUT)
  while true do
    local text = self:text()
    local s, e = text:find(needle, self.pos, true)
    if s then
      local before = text:sub(self.pos, e)
      self.pos = e + 1
      return before
    end
    local left = deadline - now()
    if left <= 0 or (not self:pump(math.min(left, 0.5)) and not text:find(needle, self.pos, true)) then
      if self.closed then
        local text2 = self:text()
        if text2:find(needle, self.pos, true) then return self:expect(needle, 0) end
      end
      error(string.format("pty: no %q within %gs; the screen after the last match:\n%s", needle,
        timeout or M.DEFAULT_TIMEOUT, text:sub(self.pos)), 2)
    end
  end
end

-- Type bytes ("\r" is Enter, "\3" Ctrl-C, "\4" Ctrl-D, "\t" Tab).
function Pty:send(bytes)
  local n = C.tide_pty_write(self.fd, bytes, #bytes)
  assert(n == #bytes, "pty: write failed")
end

-- Wait for the program to end (its terminal closes); its exit status, or
-- nil after `timeout` seconds.
function Pty:wait(timeout)
  local deadline = now() + (timeout or M.DEFAULT_TIMEOUT)
  while not self.closed and now() < deadline do self:pump(0.2) end
  while now() < deadline do -- sh writes the status right before closing its end
    local f = io.open(self.rc_file, "r")
    local rc = f and tonumber(f:read("*a"))
    if f then f:close() end
    if rc then
      os.remove(self.rc_file)
      return rc
    end
    self:pump(0.05)
  end
  return nil
end

-- Close our side (the program gets SIGHUP if still running).
function Pty:close()
  if self.fd then C.tide_pty_close(self.fd) end
  self.fd = nil
  self.closed = true
end

return M
