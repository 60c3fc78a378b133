/* cli/main.c — the `tide` program, with `lua`'s command line: a script (with
 * `arg` and `...` as lua sets them), -e code, -l modules, stdin, or the REPL;
 * plus tide's own options (--threads, --device, --help) and its commands
 * (export, run, summary: stdlib/tide/cli/). Exit status: 0, 1 when the code
 * failed, 2 when the command line was wrong or a file is missing. */
#include <lauxlib.h>
#include <lua.h>
#include <errno.h>
#include <limits.h>
#include <luajit.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdbool.h>
#include <unistd.h>

#include "tide/device.h"
#include "tide/dist.h"
#include "tide/runtime.h"
#include "tide/vm.h"
#include "../repl/repl.h"
#include "../vm/vm_internal.h"

static const char *progname = "tide";
static lua_State *volatile running_L;
static pthread_t main_thread; /* the thread that runs Lua, set before Ctrl-C is armed */

/* Exit statuses: the code failed (a Lua error), or the command line did. */
#define EXIT_CODE_FAILED 1
#define EXIT_USAGE 2

/* `tide --help`: how to use tide, on stdout. */
static void print_help(void) {
  printf("usage: %s [options] [script [args]]\n"
         "       %s [--threads N] [--device NAME] command [args]\n"
         "Commands (%s command --help tells more):\n"
         "  export script.lua dir    run the script and save the model or traced function\n"
         "                           it returns as a SavedModel in dir\n"
         "  run dir --input file     run a SavedModel on a .npy or .safetensors input and\n"
         "                           print the outputs (or --output file.npy|.safetensors)\n"
         "  summary dir              print a SavedModel's signatures, variables and layers\n"
         "  (a script named like a command runs as ./run or -- run)\n"
         "Options:\n"
         "  -e code          run the string 'code'\n"
         "  -l name          require library 'name' into global 'name'\n"
         "  -i               enter the REPL after running the script or -e code\n"
         "  -v               print the version\n"
         "  --threads N      use N threads for CPU kernels (default: the machine's cores)\n"
         "  --device NAME    run ops on NAME: cpu (cuda: not as a default yet; see docs/gpu.md)\n"
         "  --help           print this help\n"
         "  --               stop handling options\n"
         "  -                run standard input and stop handling options\n"
         "With no script, -e or -v, tide starts the REPL on a terminal and runs\n"
         "standard input otherwise. The script's arguments are in `arg` (arg[0] is\n"
         "the script, negative indices the interpreter and its options) and `...`.\n"
         "Exit status: 0, 1 when the code or command failed, 2 for a wrong option or a\n"
         "missing file. The REPL is described in docs/repl.md.\n",
         progname, progname, progname);
  fflush(stdout);
}

/* A wrong command line: one line on stderr (exit status EXIT_USAGE follows). */
static void usage_error(const char *fmt, const char *what) {
  fprintf(stderr, "%s: ", progname);
  fprintf(stderr, fmt, what);
  fprintf(stderr, " (%s --help lists the options)\n", progname);
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
 * kills the process, which is the only way out of a JIT-compiled loop. A
 * Ctrl-C the kernel handed to another thread (one of OpenBLAS's, while the
 * Lua thread holds signals around a oneDNN call) is sent on to the Lua
 * thread: lua_sethook belongs on the thread running Lua. */
static void on_sigint(int sig) {
  if (!pthread_equal(pthread_self(), main_thread)) {
    int saved = errno;
    pthread_kill(main_thread, sig);
    errno = saved;
    return;
  }
  signal(sig, SIG_DFL);
  tide_request_interrupt();
  lua_State *L = running_L;
  if (L) lua_sethook(L, stop_hook, LUA_MASKCALL | LUA_MASKRET | LUA_MASKCOUNT, 1);
}

/* Call the function below nargs arguments with a traceback and Ctrl-C armed. */
static int docall(lua_State *L, int nargs, int nresults) {
  main_thread = pthread_self();
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
 * with the arguments after it as `...`. A script that cannot be opened is a
 * one-line error and EXIT_USAGE; a failure in it, its traceback and EXIT_CODE_FAILED. */
static int run_script(lua_State *L, char **argv, int argc, int script) {
  const char *name = argv[script];
  if (strcmp(name, "-") == 0 && (script == 0 || strcmp(argv[script - 1], "--") != 0)) name = NULL;
  int status = luaL_loadfile(L, name);
  if (status == LUA_ERRFILE) {
    report(L, status);
    return EXIT_USAGE;
  }
  if (status != 0) return report(L, status) ? EXIT_CODE_FAILED : 0;
  int nargs = argc - script - 1;
  luaL_checkstack(L, nargs + 3, "too many arguments to script");
  for (int i = script + 1; i < argc; i++) lua_pushstring(L, argv[i]);
  return report(L, docall(L, nargs, 0)) ? EXIT_CODE_FAILED : 0;
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

/* The options before the script, as lua 5.4's collectargs reads them, and tide's own. */
typedef struct options {
  bool has_e, has_v, has_i, has_l, help;
  int threads;        /* --threads N, 0 when not given */
  const char *device; /* --device NAME, NULL when not given */
  int script;         /* index of the script in argv, 0 when there is none */
  int command;        /* index of a command (export, run, summary) in argv, 0 when there is none */
} options;

static const char *const commands[] = {"export", "run", "summary"};

/* True when a is the name of one of tide's commands. */
static bool is_command(const char *a) {
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    if (strcmp(a, commands[i]) == 0) return true;
  return false;
}

/* The value of a long option: "--name=value" or "--name value" (then *i
 * moves past it); NULL (and a one-line error) when it has none. */
static const char *long_value(int argc, char **argv, int *i, const char *name) {
  const char *a = argv[*i] + 2 + strlen(name);
  if (*a == '=') return a + 1;
  if (*i + 1 < argc) return argv[++*i];
  usage_error("'%s' needs a value", argv[*i]);
  return NULL;
}

/* True when the argument a is the long option `name`, as "--name" or "--name=...". */
static bool is_long(const char *a, const char *name) {
  size_t n = strlen(name);
  return strncmp(a + 2, name, n) == 0 && (a[2 + n] == '\0' || a[2 + n] == '=');
}

/* A long option (argv[*i] starts with "--" and has more): true when it is
 * well formed, else false after a one-line error. */
static bool collect_long(int argc, char **argv, int *i, options *o) {
  const char *a = argv[*i];
  if (strcmp(a, "--help") == 0) {
    o->help = true;
    return true;
  }
  if (is_long(a, "threads")) {
    const char *v = long_value(argc, argv, i, "threads");
    if (!v) return false;
    char *end;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (!*v || *end || errno || n < 1 || n > INT_MAX) {
      usage_error("--threads needs a whole number of threads >= 1, got '%s'", v);
      return false;
    }
    o->threads = (int)n;
    return true;
  }
  if (is_long(a, "device")) {
    const char *v = long_value(argc, argv, i, "device");
    if (!v) return false;
    if (strcmp(v, "cpu") != 0 && strcmp(v, "cuda") != 0) {
      usage_error("--device must be cpu or cuda, got '%s'", v);
      return false;
    }
    o->device = v;
    return true;
  }
  usage_error("unrecognized option '%s'", a);
  return false;
}

/* An option tide does not know: say so in one line; false. */
static bool unrecognized(const char *a) {
  usage_error("unrecognized option '%s'", a);
  return false;
}

/* True when the command line is well formed (else a one-line error was printed). */
static bool collect_args(int argc, char **argv, options *o) {
  memset(o, 0, sizeof *o);
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (a[0] != '-') { /* the script, or a command when only tide's long options came before */
      if (is_command(a) && !o->has_e && !o->has_v && !o->has_i && !o->has_l) o->command = i;
      else o->script = i;
      return true;
    }
    switch (a[1]) {
    case '\0': /* "-": standard input */
      o->script = i;
      return true;
    case '-':
      if (a[2] != '\0') { /* a long option */
        if (!collect_long(argc, argv, &i, o)) return false;
        break;
      }
      /* "--": the next argument is the script, whatever it looks like */
      o->script = i + 1 < argc ? i + 1 : 0;
      return true;
    case 'i':
      if (a[2] != '\0') return unrecognized(a);
      o->has_i = true;
      break;
    case 'v':
      if (a[2] != '\0') return unrecognized(a);
      o->has_v = true;
      break;
    case 'e':
    case 'l':
      if (a[1] == 'e') o->has_e = true;
      else o->has_l = true;
      if (a[2] == '\0' && ++i >= argc) { /* "-e" with nothing after it */
        usage_error("'%s' needs an argument", a);
        return false;
      }
      break;
    default:
      return unrecognized(a);
    }
  }
  return true;
}

/* `tide command args...`: tide.cli.main(command, {args}) prints its results
 * and errors and gives the exit status. */
static int run_command(lua_State *L, char **argv, int argc, int command) {
  lua_getglobal(L, "require");
  lua_pushliteral(L, "tide.cli");
  if (report(L, docall(L, 1, 1))) return EXIT_CODE_FAILED;
  lua_getfield(L, -1, "main");
  lua_remove(L, -2);
  lua_pushstring(L, argv[command]);
  lua_createtable(L, argc - command - 1, 0);
  for (int i = command + 1; i < argc; i++) {
    lua_pushstring(L, argv[i]);
    lua_rawseti(L, -2, i - command);
  }
  if (report(L, docall(L, 2, 1))) return EXIT_CODE_FAILED;
  int code = lua_isnumber(L, -1) ? (int)lua_tointeger(L, -1) : EXIT_CODE_FAILED;
  lua_pop(L, 1);
  return code;
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
 * REPL (terminal) or stdin (otherwise) when nothing else was asked for.
 * --threads and --device apply before any of it runs. */
int main(int argc, char **argv) {
  if (argc > 0 && argv[0] && argv[0][0]) progname = argv[0];
  options o;
  if (!collect_args(argc, argv, &o)) return EXIT_USAGE;
  if (o.help) {
    print_help();
    return EXIT_SUCCESS;
  }
  if (o.device && strcmp(o.device, "cuda") == 0) {
    /* The backend exists (tide.device, x:to), but placing every op of a
     * script on the GPU by default does not yet: say which of the two stops it. */
    if (tide_cuda_device_count() <= 0)
      fprintf(stderr, "%s: --device cuda: no CUDA device visible (%s)\n", progname, tide_cuda_unavailable_reason());
    else
      fprintf(stderr, "%s: --device cuda: placing every op on the GPU by default is not built yet; use "
                      "tide.device(\"cuda:0\", fn) or x:to(\"cuda:0\") in the script\n", progname);
    return EXIT_USAGE;
  }
  if (o.threads && tide_set_num_threads(o.threads) != TIDE_OK) {
    fprintf(stderr, "%s: --threads %d: %s\n", progname, o.threads, tide_last_error());
    return EXIT_USAGE;
  }
  if (o.has_v) print_version();

  tide_vm *vm = tide_vm_open(NULL);
  if (!vm) {
    fprintf(stderr, "%s: cannot create a Lua state: not enough memory\n", progname);
    return EXIT_CODE_FAILED;
  }
  lua_State *L = tide_vm_lua_state(vm);
  if (o.command) {
    int code = run_command(L, argv, argc, o.command);
    tide_vm_close(vm);
    return code;
  }
  set_arg_table(L, argv, argc, o.script);

  int status = run_args(L, argv, o.script ? o.script : argc) ? EXIT_CODE_FAILED : 0;
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
  /* Under mpirun, a worker whose script failed ends the whole job now: the
   * others would otherwise wait in their next collective until it times out. */
  if (status == EXIT_CODE_FAILED) tide_dist_abort(status);
  tide_vm_close(vm);
  return status;
}
