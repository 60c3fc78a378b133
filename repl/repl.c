/* repl/repl.c — tide's REPL: readline editing, completion and history on a
 * terminal, expressions print their values, more lines while the chunk is
 * incomplete, top-level locals kept, errors printed, Ctrl-C cancels input or a run. */
#include "repl.h"

#include <errno.h>
#include <lauxlib.h>
#include <lua.h>
#include <luajit.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <unistd.h>

#include <readline/history.h>
#include <readline/readline.h>

#include "tide/runtime.h"
#include "../vm/vm_internal.h"

#define PROMPT "tide> "
#define PROMPT_MORE "  ... "
#define HISTORY_LINES 1000
/* The local that carries the locals keeper into a statement chunk (skipped when kept). */
#define KEEP_NAME "__tide_keep_locals__"

static bool use_readline;
static char history_path[4096];
static lua_State *completion_L;
static char *last_history;

/* Signal state. While a chunk runs, running_L is set and Ctrl-C stops it;
 * otherwise Ctrl-C only raises got_sigint for the input loop. */
static volatile sig_atomic_t got_sigint;
static volatile sig_atomic_t run_sigints;
static lua_State *volatile running_L;

/* ---- Ctrl-C ------------------------------------------------------------------- */

/* The count hook set from the signal handler: raise "interrupted!" at the
 * next Lua instruction, located at the innermost line typed at the prompt
 * (not inside tide's library) when there is one. */
static void stop_hook(lua_State *L, lua_Debug *ar) {
  lua_sethook(L, NULL, 0, 0);
  int level = 0;
  for (int i = 0; lua_getstack(L, i, ar); i++) {
    if (lua_getinfo(L, "Sl", ar) && ar->currentline > 0 && strcmp(ar->source, "=stdin") == 0) {
      level = i;
      break;
    }
  }
  luaL_where(L, level); /* a C hook adds no frame of its own */
  lua_pushfstring(L, "%sinterrupted!", lua_tostring(L, -1));
  lua_error(L);
}

/* Only async-signal-safe work here: flags, lua_sethook (as lua.c does), write. */
static void on_sigint(int sig) {
  lua_State *L = running_L;
  if (!L) { /* typing: the input loop abandons the line */
    got_sigint = 1;
    return;
  }
  int n = ++run_sigints;
  if (n <= 2) { /* stop kernels at their next check and Lua at its next instruction */
    tide_request_interrupt();
    lua_sethook(L, stop_hook, LUA_MASKCALL | LUA_MASKRET | LUA_MASKCOUNT, 1);
    if (n == 2) {
      /* LuaJIT's compiled loops never look at hooks: give the user a way out. */
      static const char msg[] =
          "\n(still running: a JIT-compiled loop cannot be interrupted; press Ctrl-C again to quit tide)\n";
      ssize_t w = write(STDERR_FILENO, msg, sizeof msg - 1);
      (void)w;
    }
    return;
  }
  signal(sig, SIG_DFL); /* SIGINT is blocked in here: the raise lands on return */
  raise(sig);
}

/* Our Ctrl-C handler, for the whole REPL session. */
static void install_sigint(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0; /* no SA_RESTART: a blocked read must see EINTR */
  sigaction(SIGINT, &sa, NULL);
}

/* ---- reading input ------------------------------------------------------------ */

static char *cb_line;
static bool cb_done;

/* readline's callback when a line is complete (NULL at end of input). */
static void on_line(char *line) {
  cb_line = line;
  cb_done = true;
  rl_callback_handler_remove();
}

/* One line from the terminal through readline's callback interface, so that
 * Ctrl-C is noticed in pselect (with SIGINT blocked everywhere else) and
 * readline is cleaned up by its own functions instead of a longjmp. */
static char *read_terminal(const char *prompt, bool *interrupted) {
  sigset_t block, orig;
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  sigprocmask(SIG_BLOCK, &block, &orig);
  got_sigint = 0;
  cb_line = NULL;
  cb_done = false;
  rl_callback_handler_install(prompt, on_line);
  int fd = fileno(rl_instream ? rl_instream : stdin);
  while (!cb_done) {
    fd_set in;
    FD_ZERO(&in);
    FD_SET(fd, &in);
    int r = pselect(fd + 1, &in, NULL, NULL, NULL, &orig);
    if (r < 0 && errno == EINTR && got_sigint) {
      got_sigint = 0;
      rl_point = rl_end; /* "^C" after what was typed, as a shell shows it */
      rl_redisplay();
      rl_echo_signal_char(SIGINT);
      rl_free_line_state();
      rl_callback_sigcleanup();
      rl_cleanup_after_signal();
      rl_callback_handler_remove();
      *interrupted = true;
      break;
    }
    if (r < 0 && errno == EINTR) continue; /* another signal (SIGWINCH) */
    if (r < 0) {
      rl_callback_handler_remove();
      break;
    }
    rl_callback_read_char();
  }
  sigprocmask(SIG_SETMASK, &orig, NULL);
  return cb_done ? cb_line : NULL;
}

/* One line from a pipe or file, without prompts; NULL at end of input. */
static char *read_plain(bool *interrupted) {
  char *line = NULL;
  size_t cap = 0;
  got_sigint = 0;
  ssize_t n = getline(&line, &cap, stdin);
  if (n < 0) {
    free(line);
    if (got_sigint) {
      got_sigint = 0;
      clearerr(stdin);
      *interrupted = true;
    }
    return NULL;
  }
  if (n && line[n - 1] == '\n') line[--n] = '\0';
  if (n && line[n - 1] == '\r') line[--n] = '\0';
  return line;
}

/* One line of input without its newline (malloc'd), or NULL at end of input
 * or on Ctrl-C (then *interrupted is set). */
static char *read_line(const char *prompt, bool *interrupted) {
  *interrupted = false;
  return use_readline ? read_terminal(prompt, interrupted) : read_plain(interrupted);
}

/* ---- compiling a chunk -------------------------------------------------------- */

/* True (and the message popped) when the compile error says the chunk simply
 * ended too soon, so another line may complete it. */
static bool incomplete(lua_State *L, int status) {
  if (status != LUA_ERRSYNTAX) return false;
  size_t len;
  const char *msg = lua_tolstring(L, -1, &len);
  static const char eof[] = "'<eof>'";
  size_t elen = sizeof eof - 1;
  if (msg && len >= elen && strcmp(msg + len - elen, eof) == 0) {
    lua_pop(L, 1);
    return true;
  }
  return false;
}

/* Compile a .. b .. c as the chunk "stdin"; pushes a function or a message. */
static int load_joined(lua_State *L, const char *a, const char *b, const char *c) {
  size_t na = strlen(a), nb = strlen(b), nc = strlen(c);
  char *text = malloc(na + nb + nc + 1);
  if (!text) {
    lua_pushliteral(L, "not enough memory");
    return LUA_ERRMEM;
  }
  memcpy(text, a, na);
  memcpy(text + na, b, nb);
  memcpy(text + na + nb, c, nc + 1);
  int status = luaL_loadbuffer(L, text, na + nb + nc, "=stdin");
  free(text);
  return status;
}

/* Copy the calling chunk's locals into globals, so `local x = ...` typed on
 * one line is still there on the next (each line is its own chunk). */
static int keep_locals(lua_State *L) {
  lua_Debug ar;
  if (!lua_getstack(L, 1, &ar)) return 0;
  for (int i = 1;; i++) {
    const char *name = lua_getlocal(L, &ar, i);
    if (!name) break;
    if (name[0] == '(' || strcmp(name, KEEP_NAME) == 0) {
      lua_pop(L, 1); /* for-loop state and our own carrier */
      continue;
    }
    lua_setfield(L, LUA_GLOBALSINDEX, name);
  }
  return 0;
}

/* Compile `chunk` and push the function (status 0) and the number of
 * arguments it takes in *nargs (already pushed), or push an error message.
 * An expression is compiled as `return (function(...) return ... end)(expr)`
 * so that a call in it is not a tail call: errors keep their stdin:N position. */
static int compile(lua_State *L, const char *chunk, int *nargs) {
  *nargs = 0;
  const char *expr = chunk[0] == '=' ? chunk + 1 : NULL; /* Lua 5.1's `=expr` */
  if (load_joined(L, "return ", expr ? expr : chunk, "") == 0) {
    lua_pop(L, 1);
    /* The ")" stays on the last line (errors keep their line) unless a "--"
     * there could make it part of a comment. */
    const char *text = expr ? expr : chunk, *last = strrchr(text, '\n');
    const char *close = strstr(last ? last : text, "--") ? "\n)" : ")";
    if (load_joined(L, "return (function(...) return ... end)(", text, close) == 0) return 0;
    lua_pop(L, 1);
    return load_joined(L, "return ", expr ? expr : chunk, "");
  }
  lua_pop(L, 1);
  if (expr) return load_joined(L, "return ", expr, "");
  int status = luaL_loadbuffer(L, chunk, strlen(chunk), "=stdin");
  if (status != 0) return status;
  /* Statements: append a call that keeps the chunk's locals (not possible
   * after a final return or break, which then compile as typed). */
  if (load_joined(L, chunk, "\nlocal " KEEP_NAME " = ...; " KEEP_NAME "()", "") == 0) {
    lua_remove(L, -2);
    lua_pushcfunction(L, keep_locals);
    *nargs = 1;
    return 0;
  }
  lua_pop(L, 1);
  return 0;
}

/* ---- running and printing ----------------------------------------------------- */

/* Print every value the chunk returned through the global print, as lua does. */
static void print_results(lua_State *L, int base) {
  int n = lua_gettop(L) - base;
  if (n <= 0) return;
  lua_getglobal(L, "print");
  lua_insert(L, base + 1);
  if (tide_vm_pcall(L, n, 0) != 0) {
    fprintf(stderr, "error calling 'print': %s\n", lua_tostring(L, -1));
    lua_pop(L, 1);
  }
}

/* After a line that failed, nothing of tide's can still be running: undo
 * what an interrupt may have left set (a recording tape, a trace in
 * progress) if it cut one of tide.scope's ways out short. */
static void reset_tide_state(lua_State *L) {
  int top = lua_gettop(L);
  if (luaL_loadstring(L, "local s = package.loaded['tide.scope'] if s then s.reset() end") == 0) lua_pcall(L, 0, 0, 0);
  lua_settop(L, top);
}

/* Run the function under its nargs arguments with Ctrl-C armed. Code typed at
 * the prompt runs in the interpreter (jit.off for that chunk only; functions
 * it defines or calls still compile), so a loop typed there can be stopped:
 * LuaJIT's compiled code never checks hooks. */
static int run_chunk(lua_State *L, int nargs) {
  luaJIT_setmode(L, lua_gettop(L) - nargs, LUAJIT_MODE_FUNC | LUAJIT_MODE_OFF);
  run_sigints = 0;
  running_L = L;
  int status = tide_vm_pcall(L, nargs, LUA_MULTRET);
  running_L = NULL;
  lua_sethook(L, NULL, 0, 0);
  run_sigints = 0;
  if (status != 0) reset_tide_state(L);
  return status;
}

/* ---- completion --------------------------------------------------------------- */

/* Given the word before the cursor, the names that complete it: globals and
 * keywords, fields after `a.b.`, and methods after `x:` (tensors included). */
static const char completer_src[] =
    "local word = ...\n"
    "local path, sep, part = word:match('^([%a_][%w_%.:]-)([%.:])([%w_]*)$')\n"
    "if not path then path, sep, part = nil, '', word:match('^[%a_][%w_]*$') or (word == '' and '') end\n"
    "if not part then return {} end\n"
    "local found, seen = {}, {}\n"
    "local function add(k)\n"
    "  if type(k) == 'string' and k:match('^[%a_][%w_]*$') and k:sub(1, #part) == part and not seen[k] then\n"
    "    seen[k] = true; found[#found + 1] = k\n"
    "  end\n"
    "end\n"
    "local obj = _G\n"
    "if path then\n"
    "  if path:find(':', 1, true) then return {} end\n"
    "  for name in path:gmatch('[^%.]+') do\n"
    "    local ok, v = pcall(function() return obj[name] end)\n"
    "    if not ok or v == nil then return {} end\n"
    "    obj = v\n"
    "  end\n"
    "else\n"
    "  for _, k in ipairs{'and','break','do','else','elseif','end','false','for','function','goto','if',\n"
    "    'in','local','nil','not','or','repeat','return','then','true','until','while'} do add(k) end\n"
    "end\n"
    "local function add_table(t, depth)\n"
    "  if type(t) ~= 'table' or depth > 4 then return end\n"
    "  for k in pairs(t) do add(k) end\n"
    "  local mt = getmetatable(t)\n"
    "  if type(mt) == 'table' then add_table(rawget(mt, '__index'), depth + 1) end\n"
    "end\n"
    "if type(obj) == 'table' then add_table(obj, 0)\n"
    "elseif type(obj) == 'cdata' then\n"
    "  local binding = package.loaded['tide.binding']\n"
    "  if binding and binding.istensor(obj) then\n"
    "    add_table(binding.methods, 0)\n"
    "    if sep == '.' then add_table(binding.properties, 0) end\n"
    "  end\n"
    "elseif type(obj) == 'string' and sep == ':' then add_table(string, 0) end\n"
    "table.sort(found)\n"
    "local prefix = path and (path .. sep) or ''\n"
    "for i = 1, #found do found[i] = prefix .. found[i] end\n"
    "return found\n";

static char **completion_list;
static size_t completion_count, completion_next;

/* Forget the completions readline did not take (it frees those it took). */
static void free_completions(void) {
  for (size_t i = completion_next; i < completion_count; i++) free(completion_list[i]);
  free(completion_list);
  completion_list = NULL;
  completion_count = completion_next = 0;
}

/* Fill completion_list from the Lua completer (errors mean no completions). */
static void find_completions(const char *text) {
  free_completions();
  lua_State *L = completion_L;
  int top = lua_gettop(L);
  lua_getfield(L, LUA_REGISTRYINDEX, "tide.repl.completer");
  lua_pushstring(L, text);
  if (lua_isfunction(L, -2) && lua_pcall(L, 1, 1, 0) == 0 && lua_istable(L, -1)) {
    size_t n = lua_objlen(L, -1);
    completion_list = calloc(n ? n : 1, sizeof *completion_list);
    for (size_t i = 0; completion_list && i < n; i++) {
      lua_rawgeti(L, -1, (int)i + 1);
      const char *s = lua_tostring(L, -1);
      if (s && (completion_list[completion_count] = strdup(s))) completion_count++;
      lua_pop(L, 1);
    }
  }
  lua_settop(L, top);
}

/* readline's generator: the next completion of `text`, or NULL. */
static char *completion_generator(const char *text, int state) {
  if (state == 0) find_completions(text);
  if (completion_next < completion_count) return completion_list[completion_next++]; /* readline frees it */
  return NULL;
}

/* Complete Lua names only (globals, fields, methods), never file names. */
static char **complete(const char *text, int start, int end) {
  (void)start;
  (void)end;
  rl_attempted_completion_over = 1; /* never fall back to file names */
  rl_completion_append_character = '\0';
  return rl_completion_matches(text, completion_generator);
}

/* ---- setup -------------------------------------------------------------------- */

/* History lives in ~/.tide_history; each entry is appended as it is made, so
 * a session that ends by a signal keeps what was typed. */
static void setup_history(void) {
  using_history();
  const char *home = getenv("HOME");
  if (!home || !*home) return;
  snprintf(history_path, sizeof history_path, "%s/.tide_history", home);
  if (read_history(history_path) != 0) {
    FILE *f = fopen(history_path, "a"); /* append_history needs the file to exist */
    if (f) fclose(f);
    else history_path[0] = '\0';
  }
  if (history_length > 0) {
    HIST_ENTRY *last = history_get(history_base + history_length - 1);
    if (last && last->line) last_history = strdup(last->line);
  }
}

/* Add a finished chunk to the history and to ~/.tide_history. */
static void remember(const char *chunk) {
  if (last_history && strcmp(last_history, chunk) == 0) return; /* no repeats */
  add_history(chunk);
  free(last_history);
  last_history = strdup(chunk);
  if (history_path[0]) append_history(1, history_path);
}

/* Readline for a terminal: our Ctrl-C, Lua word breaks, completion, history. */
static void setup_readline(lua_State *L) {
  rl_readline_name = "tide";
  rl_catch_signals = 0; /* Ctrl-C is ours (install_sigint); readline keeps SIGWINCH */
  rl_basic_word_break_characters = " \t\n\"\\'`@$><=;|&{(,+-*/%^~#[]";
  rl_attempted_completion_function = complete;
  completion_L = L;
  if (luaL_loadbuffer(L, completer_src, sizeof completer_src - 1, "=(tide completer)") == 0)
    lua_setfield(L, LUA_REGISTRYINDEX, "tide.repl.completer");
  else
    lua_pop(L, 1);
  setup_history();
}

/* Load tide into the global `tide` so a session can start typing at once. */
static void preload_tide(lua_State *L) {
  if (luaL_loadstring(L, "tide = require 'tide'") == 0 && tide_vm_pcall(L, 0, 0) == 0) return;
  fprintf(stderr, "warning: could not load tide: %s\n", lua_tostring(L, -1));
  lua_pop(L, 1);
}

/* ---- the loop ----------------------------------------------------------------- */

int tide_repl_run(tide_vm *vm) {
  lua_State *L = tide_vm_lua_state(vm);
  use_readline = isatty(STDIN_FILENO);
  if (use_readline) {
    setup_readline(L);
    printf("tide %s (%s)  Ctrl-D quits; expressions print their value\n", tide_version(), LUAJIT_VERSION);
    fflush(stdout);
  }
  preload_tide(L);
  struct sigaction old_sigint;
  sigaction(SIGINT, NULL, &old_sigint);
  install_sigint();

  char *chunk = NULL;
  for (;;) {
    bool interrupted;
    char *line = read_line(chunk ? PROMPT_MORE : PROMPT, &interrupted);
    if (interrupted) { /* Ctrl-C while typing: drop the line and the chunk */
      free(chunk);
      chunk = NULL;
      if (use_readline) printf("\n");
      fflush(stdout);
      continue;
    }
    if (!line) break;
    if (!chunk) {
      chunk = line;
    } else {
      size_t a = strlen(chunk), b = strlen(line);
      char *joined = realloc(chunk, a + b + 2);
      if (!joined) {
        free(line);
        break;
      }
      joined[a] = '\n';
      memcpy(joined + a + 1, line, b + 1);
      chunk = joined;
      free(line);
    }
    if (chunk[strspn(chunk, " \t\r\n")] == '\0') {
      free(chunk);
      chunk = NULL;
      continue;
    }
    int base = lua_gettop(L), nargs = 0;
    int status = compile(L, chunk, &nargs);
    if (incomplete(L, status)) continue;
    if (use_readline) remember(chunk);
    free(chunk);
    chunk = NULL;
    if (status == 0) status = run_chunk(L, nargs);
    if (status == 0) {
      print_results(L, base);
    } else {
      fflush(stdout);
      const char *msg = lua_tostring(L, -1);
      fprintf(stderr, "%s\n", msg ? msg : "(error object is not a string)");
      fflush(stderr);
    }
    lua_settop(L, base);
    fflush(stdout);
  }
  free(chunk);
  if (use_readline) {
    printf("\n");
    if (history_path[0]) history_truncate_file(history_path, HISTORY_LINES);
    free_completions();
  }
  fflush(stdout);
  sigaction(SIGINT, &old_sigint, NULL);
  return 0;
}
