/* repl/repl.c — tide's REPL: readline editing, completion and history on a
 * terminal, expressions print their values, more lines while the chunk is
 * incomplete, top-level locals kept, errors printed, Ctrl-C cancels input or a run. */
#include "repl.h"

#include <errno.h>
#include <lauxlib.h>
#include <lua.h>
#include <luajit.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <time.h>
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
/* The thread that reads input and runs chunks: the only one that handles Ctrl-C. */
static pthread_t repl_thread;

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

/* Only async-signal-safe work here: flags, lua_sethook (as lua.c does), write,
 * pthread_kill. SIGINT is sent to the process, and the kernel hands it to any
 * thread that does not block it: when the REPL thread holds it (in
 * read_terminal outside pselect, around oneDNN calls), that is one of
 * OpenBLAS's threads. There the flag would be set but the REPL thread's
 * pselect never woken (the Ctrl-C at the "..." prompt that went unseen), so
 * the signal is sent on to the REPL thread, which takes it when it unblocks. */
static void on_sigint(int sig) {
  if (!pthread_equal(pthread_self(), repl_thread)) {
    int saved = errno;
    pthread_kill(repl_thread, sig);
    errno = saved;
    return;
  }
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
 * readline is cleaned up by its own functions instead of a longjmp.
 * got_sigint is checked before every wait, not only when pselect says EINTR:
 * a Ctrl-C typed after the last line was read (while an incomplete chunk was
 * compiled) is for this prompt, and readline's own wait for a key (rl_getc's
 * pselect, with an empty mask when rl_catch_signals is 0) can run our
 * handler, which then leaves no signal pending for ours. */
static char *read_terminal(const char *prompt, bool *interrupted) {
  sigset_t block, orig;
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  sigprocmask(SIG_BLOCK, &block, &orig);
  cb_line = NULL;
  cb_done = false;
  rl_callback_handler_install(prompt, on_line);
  int fd = fileno(rl_instream ? rl_instream : stdin);
  while (!cb_done) {
    if (got_sigint) {
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
    fd_set in;
    FD_ZERO(&in);
    FD_SET(fd, &in);
    int r = pselect(fd + 1, &in, NULL, NULL, NULL, &orig);
    if (r < 0 && errno == EINTR) continue; /* Ctrl-C (checked above) or another signal (SIGWINCH) */
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
  if (got_sigint) { /* Ctrl-C after the last line was read: it drops the chunk */
    got_sigint = 0;
    *interrupted = true;
    return NULL;
  }
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

/* Print the values the chunk returned (base..top) as tide.repl.show_all
 * renders them: tensors summarized, tables pretty-printed, tab-separated. */
static void print_results(lua_State *L, int base) {
  int n = lua_gettop(L) - base;
  if (n <= 0) return;
  lua_getfield(L, LUA_REGISTRYINDEX, "tide.repl");
  if (lua_istable(L, -1)) lua_getfield(L, -1, "show_all");
  else lua_getglobal(L, "tostring");
  lua_remove(L, -2);
  lua_insert(L, base + 1);
  if (tide_vm_pcall(L, n, 1) != 0 || !lua_isstring(L, -1)) {
    fprintf(stderr, "error printing the result: %s\n", lua_tostring(L, -1));
    lua_pop(L, 1);
    return;
  }
  size_t len;
  const char *text = lua_tolstring(L, -1, &len);
  fwrite(text, 1, len, stdout);
  fputc('\n', stdout);
  lua_pop(L, 1);
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
 * the prompt runs in the interpreter (jit.off for that chunk and the
 * functions it defines; tide's library still compiles), so a loop typed
 * there, or in a function typed there, can be stopped: LuaJIT's compiled
 * code never checks hooks. Ops check tide's interrupt flag themselves. */
static int run_chunk(lua_State *L, int nargs) {
  luaJIT_setmode(L, lua_gettop(L) - nargs, LUAJIT_MODE_ALLFUNC | LUAJIT_MODE_OFF);
  run_sigints = 0;
  tide_clear_interrupt(); /* a request left over from the last run is not for this one */
  running_L = L;
  if (got_sigint) { /* Ctrl-C after Enter, before the run was armed: it is meant for this run */
    got_sigint = 0;
    on_sigint(SIGINT);
  }
  int status = tide_vm_pcall(L, nargs, LUA_MULTRET);
  running_L = NULL;
  lua_sethook(L, NULL, 0, 0);
  run_sigints = 0;
  tide_clear_interrupt(); /* one that stopped Lua code, not a kernel, is still pending */
  if (status != 0) reset_tide_state(L);
  return status;
}

/* ---- completion --------------------------------------------------------------- */

static char **completion_list;
static size_t completion_count, completion_next;

/* Forget the completions readline did not take (it frees those it took). */
static void free_completions(void) {
  for (size_t i = completion_next; i < completion_count; i++) free(completion_list[i]);
  free(completion_list);
  completion_list = NULL;
  completion_count = completion_next = 0;
}

/* Fill completion_list from tide.repl.complete (errors mean no completions). */
static void find_completions(const char *text) {
  free_completions();
  lua_State *L = completion_L;
  int top = lua_gettop(L);
  lua_getfield(L, LUA_REGISTRYINDEX, "tide.repl"); /* nil when tide failed to load */
  if (lua_istable(L, -1)) lua_getfield(L, -1, "complete");
  else lua_pushnil(L);
  lua_remove(L, -2);
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
  stifle_history(HISTORY_LINES);
  const char *home = getenv("HOME");
  if (!home || !*home) return;
  snprintf(history_path, sizeof history_path, "%s/.tide_history", home);
  if (read_history(history_path) != 0) {
    FILE *f = fopen(history_path, "a"); /* append_history needs the file to exist */
    if (f) fclose(f);
    else history_path[0] = '\0';
  } else {
    history_truncate_file(history_path, HISTORY_LINES); /* capped even when sessions end by a signal */
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
  setup_history();
}

/* Load tide into the global `tide`, help(x) into `help`, and the REPL's
 * Lua side (completion, printing) into the registry, so a session can
 * start typing at once. */
static void preload_tide(lua_State *L) {
  static const char code[] = "tide = require 'tide'\n"
                             "local repl = require 'tide.repl'\n"
                             "help = repl.help\n"
                             "return repl\n";
  if (luaL_loadstring(L, code) == 0 && tide_vm_pcall(L, 0, 1) == 0) {
    lua_setfield(L, LUA_REGISTRYINDEX, "tide.repl");
    return;
  }
  fprintf(stderr, "warning: could not load tide: %s\n", lua_tostring(L, -1));
  lua_pop(L, 1);
}

/* ---- the loop ----------------------------------------------------------------- */

/* Colors (prompt, errors, %time) only on a terminal, and never when NO_COLOR
 * is set to anything (no-color.org) or the terminal is dumb. */
static bool use_color;
#define COLOR_PROMPT "\001\033[1;36m\002"
#define COLOR_ERROR "\033[31m"
#define COLOR_NOTE "\033[2m"
#define COLOR_OFF "\033[0m"
#define PROMPT_OFF "\001\033[0m\002"

static bool want_color(void) {
  const char *no = getenv("NO_COLOR"), *term = getenv("TERM");
  if (no && *no) return false;
  if (!term || strcmp(term, "dumb") == 0) return false;
  return isatty(STDOUT_FILENO) && isatty(STDERR_FILENO);
}

/* What is left of a line that held several (a bracketed paste): handed out
 * one line at a time, as if each had been typed. */
static char *pending_text, *pending_next;

/* The next line: the rest of a paste first, then new input. */
static char *next_line(const char *prompt, bool *interrupted) {
  *interrupted = false;
  if (!pending_next) {
    char *line = read_line(prompt, interrupted);
    if (!line || !strchr(line, '\n')) return line;
    pending_text = pending_next = line;
  }
  char *start = pending_next, *nl = strchr(start, '\n');
  char *out = nl ? strndup(start, (size_t)(nl - start)) : strdup(start);
  pending_next = nl ? nl + 1 : NULL;
  if (!pending_next || !*pending_next) { /* a paste ending in a newline ends here */
    free(pending_text);
    pending_text = pending_next = NULL;
  }
  return out;
}

static void drop_pending(void) {
  free(pending_text);
  pending_text = pending_next = NULL;
}

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Print a failed run's message (on top of the stack) to stderr. */
static void print_error(lua_State *L) {
  fflush(stdout);
  const char *msg = lua_tostring(L, -1);
  fprintf(stderr, "%s%s%s\n", use_color ? COLOR_ERROR : "", msg ? msg : "(error object is not a string)",
          use_color ? COLOR_OFF : "");
  fflush(stderr);
}

/* A REPL command: "%time <chunk>" (the chunk follows), else NULL and *bad
 * set for an unknown %command. */
static const char *time_command(const char *chunk, bool *bad) {
  *bad = false;
  if (chunk[0] != '%') return NULL;
  if (strncmp(chunk, "%time", 5) == 0 && (chunk[5] == ' ' || chunk[5] == '\t' || chunk[5] == '\n'))
    return chunk + 6;
  *bad = true;
  return NULL;
}

/* Compile and run one complete chunk (or report it incomplete: returns
 * false then and leaves the chunk to grow). */
static bool eval_chunk(lua_State *L, const char *chunk) {
  bool bad;
  const char *timed = time_command(chunk, &bad);
  if (bad) {
    fflush(stdout);
    fprintf(stderr, "%sunknown command '%.*s' (the REPL knows %%time <expression or statements>)%s\n",
            use_color ? COLOR_ERROR : "", (int)strcspn(chunk, " \t\n"), chunk, use_color ? COLOR_OFF : "");
    if (use_readline) remember(chunk);
    return true;
  }
  const char *code = timed ? timed : chunk;
  int base = lua_gettop(L), nargs = 0;
  int status = compile(L, code, &nargs);
  if (incomplete(L, status)) return false;
  if (use_readline) remember(chunk); /* before it runs: a run that kills tide is still in the history */
  double t0 = now_seconds(), seconds = 0;
  if (status == 0) {
    status = run_chunk(L, nargs);
    seconds = now_seconds() - t0;
  }
  if (status == 0) print_results(L, base);
  else print_error(L);
  if (timed && status == 0) {
    double ms = seconds * 1e3;
    printf("%swall time: %.*f ms%s\n", use_color ? COLOR_NOTE : "", ms < 10 ? 3 : 1, ms, use_color ? COLOR_OFF : "");
  }
  lua_settop(L, base);
  fflush(stdout);
  return true;
}

int tide_repl_run(tide_vm *vm) {
  lua_State *L = tide_vm_lua_state(vm);
  use_readline = isatty(STDIN_FILENO);
  use_color = use_readline && want_color();
  if (use_readline) {
    setup_readline(L);
    printf("tide %s (%s)  Ctrl-D quits; help(x) explains x; %%time expr times it\n", tide_version(), LUAJIT_VERSION);
    fflush(stdout);
  }
  preload_tide(L);
  repl_thread = pthread_self();
  got_sigint = 0;
  struct sigaction old_sigint;
  sigaction(SIGINT, NULL, &old_sigint);
  install_sigint();

  const char *prompt = use_color ? COLOR_PROMPT PROMPT PROMPT_OFF : PROMPT;
  const char *prompt_more = use_color ? COLOR_PROMPT PROMPT_MORE PROMPT_OFF : PROMPT_MORE;
  char *chunk = NULL;
  for (;;) {
    bool interrupted;
    char *line = next_line(chunk ? prompt_more : prompt, &interrupted);
    if (interrupted) { /* Ctrl-C while typing: drop the line and the chunk */
      free(chunk);
      chunk = NULL;
      drop_pending();
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
    if (!eval_chunk(L, chunk)) continue; /* incomplete: read another line */
    free(chunk);
    chunk = NULL;
  }
  free(chunk);
  drop_pending();
  if (use_readline) {
    printf("\n");
    if (history_path[0]) history_truncate_file(history_path, HISTORY_LINES);
    free_completions();
  }
  fflush(stdout);
  sigaction(SIGINT, &old_sigint, NULL);
  return 0;
}
