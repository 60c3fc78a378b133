/* cli/main.c — the `tide` program, with `lua`'s command line: a script (with
 * `arg` and `...` as lua sets them), -e code, -l modules, stdin, or the REPL. */
#include <lauxlib.h>
#include <lua.h>
#include <luajit.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdbool.h>
#include <unistd.h>

#include "tide/runtime.h"
#include "tide/vm.h"
#include "../repl/repl.h"
#include "../vm/vm_internal.h"

static const char *progname = "tide";
static lua_State *volatile running_L;

/* Say what was wrong with the command line, then how to use it. */
static void print_usage(const char *badoption) {
  if (badoption[1] == 'e' || badoption[1] == 'l')
    fprintf(stderr, "%s: '%s' needs an argument\n", progname, badoption);
  else
    fprintf(stderr, "%s: unrecognized option '%s'\n", progname, badoption);
  fprintf(stderr,
          "usage: %s [options] [script [args]]\n"
          "Available options are:\n"
          "  -e code   run the string 'code'\n"
          "  -l name   require library 'name' into global 'name'\n"
          "  -i        enter the REPL after running the script or -e code\n"
          "  -v        print the version\n"
          "  --        stop handling options\n"
          "  -         run standard input and stop handling options\n"
          "With no script, -e or -v, tide starts the REPL on a terminal and runs\n"
          "standard input otherwise.\n",
          progname);
  fflush(stderr);
}

/* `tide -v`: tide's version and the LuaJIT under it, on stdout. */
static void print_version(void) {
  printf("tide %s (%s, C tensor core)\n", tide_version(), LUAJIT_VERSION);
  fflush(stdout);
}

/* Ctrl-C while Lua runs: raise "interrupted!" at the next hook (as lua.c does). */
static void stop_hook(lua_State *L, lua_Debug *ar) {
  (void)ar;
  lua_sethook(L, NULL, 0, 0);
  luaL_where(L, 0); /* a C hook adds no frame of its own */
  lua_pushfstring(L, "%sinterrupted!", lua_tostring(L, -1));
  lua_error(L);
}

/* The first Ctrl-C asks Lua (hook) and kernels (flag) to stop; a second one
 * kills the process, which is the only way out of a JIT-compiled loop. */
static void on_sigint(int sig) {
  signal(sig, SIG_DFL);
  tide_request_interrupt();
  lua_State *L = running_L;
  if (L) lua_sethook(L, stop_hook, LUA_MASKCALL | LUA_MASKRET | LUA_MASKCOUNT, 1);
}

/* Call the function below nargs arguments with a traceback and Ctrl-C armed. */
static int docall(lua_State *L, int nargs, int nresults) {
  running_L = L;
  signal(SIGINT, on_sigint);
  int status = tide_vm_pcall(L, nargs, nresults);
  signal(SIGINT, SIG_DFL);
  running_L = NULL;
  lua_sethook(L, NULL, 0, 0);
  return status;
}

/* Print a failed status's message (already carrying its traceback). */
static int report(lua_State *L, int status) {
  if (status != 0) {
    const char *msg = lua_tostring(L, -1);
    fflush(stdout); /* what the script printed comes before its error */
    fprintf(stderr, "%s: %s\n", progname, msg ? msg : "(error object is not a string)");
    fflush(stderr);
    lua_pop(L, 1);
  }
  return status;
}

/* arg = {[-n..-1] = the program and its options, [0] = the script, [1..] =
 * the script's arguments}; with no script, arg[0] is the program (Lua 5.4). */
static void set_arg_table(lua_State *L, char **argv, int argc, int script) {
  int narg = argc - (script + 1);
  lua_createtable(L, narg > 0 ? narg : 0, script + 1);
  for (int i = 0; i < argc; i++) {
    lua_pushstring(L, argv[i]);
    lua_rawseti(L, -2, i - script);
  }
  lua_setglobal(L, "arg");
}

/* Run the script argv[script] ("-" is standard input unless it follows "--")
 * with the arguments after it as `...`. */
static int run_script(lua_State *L, char **argv, int argc, int script) {
  const char *name = argv[script];
  if (strcmp(name, "-") == 0 && (script == 0 || strcmp(argv[script - 1], "--") != 0)) name = NULL;
  int status = luaL_loadfile(L, name);
  if (status != 0) return report(L, status);
  int nargs = argc - script - 1;
  luaL_checkstack(L, nargs + 3, "too many arguments to script");
  for (int i = script + 1; i < argc; i++) lua_pushstring(L, argv[i]);
  return report(L, docall(L, nargs, 0));
}

/* -e code: run it as the chunk "(command line)". */
static int run_code(lua_State *L, const char *code) {
  int status = luaL_loadbuffer(L, code, strlen(code), "=(command line)");
  if (status == 0) status = docall(L, 0, 0);
  return report(L, status);
}

/* -l name: name = require "name". */
static int run_require(lua_State *L, const char *name) {
  lua_getglobal(L, "require");
  lua_pushstring(L, name);
  int status = docall(L, 1, 1);
  if (status == 0) lua_setglobal(L, name);
  return report(L, status);
}

/* The options before the script, as lua 5.4's collectargs reads them. */
typedef struct options {
  bool has_e, has_v, has_i;
  int script; /* index of the script in argv, 0 when there is none */
} options;

/* 0 when the command line is well formed, else the index of the bad option. */
static int collect_args(int argc, char **argv, options *o) {
  memset(o, 0, sizeof *o);
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (a[0] != '-') { /* the script */
      o->script = i;
      return 0;
    }
    switch (a[1]) {
    case '\0': /* "-": standard input */
      o->script = i;
      return 0;
    case '-': /* "--": the next argument is the script, whatever it looks like */
      if (a[2] != '\0') return i;
      o->script = i + 1 < argc ? i + 1 : 0;
      return 0;
    case 'i':
      if (a[2] != '\0') return i;
      o->has_i = true;
      break;
    case 'v':
      if (a[2] != '\0') return i;
      o->has_v = true;
      break;
    case 'e':
      o->has_e = true;
      /* fall through */
    case 'l':
      if (a[2] == '\0' && ++i >= argc) return i - 1; /* "-e" with nothing after it */
      break;
    default:
      return i;
    }
  }
  return 0;
}

/* Run every -e and -l in order, up to the script; stop at the first error. */
static int run_args(lua_State *L, char **argv, int n) {
  for (int i = 1; i < n; i++) {
    const char *a = argv[i];
    if (a[0] != '-' || (a[1] != 'e' && a[1] != 'l')) continue;
    const char *value = a[2] ? a + 2 : argv[++i];
    int status = a[1] == 'e' ? run_code(L, value) : run_require(L, value);
    if (status != 0) return status;
  }
  return 0;
}

/* The order is lua's: -v, -e/-l in order, the script, then -i's REPL, or the
 * REPL (terminal) or stdin (otherwise) when nothing else was asked for. */
int main(int argc, char **argv) {
  if (argc > 0 && argv[0] && argv[0][0]) progname = argv[0];
  options o;
  int bad = collect_args(argc, argv, &o);
  if (bad) {
    print_usage(argv[bad]);
    return 1;
  }
  if (o.has_v) print_version();

  tide_vm *vm = tide_vm_open(NULL);
  if (!vm) {
    fprintf(stderr, "%s: cannot create a Lua state: not enough memory\n", progname);
    return 1;
  }
  lua_State *L = tide_vm_lua_state(vm);
  set_arg_table(L, argv, argc, o.script);

  int status = run_args(L, argv, o.script ? o.script : argc);
  if (status == 0 && o.script) status = run_script(L, argv, argc, o.script);
  if (status == 0) {
    if (o.has_i) {
      status = tide_repl_run(vm);
    } else if (!o.script && !o.has_e && !o.has_v) {
      if (isatty(STDIN_FILENO)) status = tide_repl_run(vm);
      else { /* like lua: run standard input as a script */
        char *stdin_argv[] = {argv[0], "-", NULL};
        status = run_script(L, stdin_argv, 2, 1);
      }
    }
  }
  tide_vm_close(vm);
  return status == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
