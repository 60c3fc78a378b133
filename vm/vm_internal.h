/* vm/vm_internal.h — what the tide program (cli/) and the REPL share with
 * libtidevm beyond the public embedding API: protected calls with tracebacks. */
#ifndef TIDE_VM_INTERNAL_H
#define TIDE_VM_INTERNAL_H

#include <lua.h>
#include <stdbool.h>

#include "tide/export.h"

/* A Lua error handler that appends a traceback to the message. */
TIDE_API int tide_vm_traceback(lua_State *L);
/* lua_pcall with tide_vm_traceback as the handler. */
TIDE_API int tide_vm_pcall(lua_State *L, int nargs, int nresults);

#endif
