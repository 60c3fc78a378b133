/* vm/bytecode.c — tide's own Lua modules loaded from the bytecode `make`
 * compiles them to (build/lj/), when it matches the source, instead of
 * parsing the source at each start.
 *
 * Why: parsing the library's Lua was 70% of the instructions from start to
 * the first op (63 M of 91 M on an AVX2 EPYC); loading bytecode cuts the
 * whole start to 32 M. The bytecode keeps its debug information and the
 * source's chunk name ("@/abs/stdlib/tide/x.lua"), so error messages,
 * tracebacks and the budget's test of library code read as before.
 *
 * A bytecode file is used only when it can only be the source's: its chunk
 * name is the source's own path (a build folder copied from another tree
 * compiled other files) and it is not older than the source (an edit
 * without `make` is seen at once). Anything else, or bytecode this LuaJIT
 * cannot load, falls through to the source. */
#include "vm_state.h"

#include <lauxlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Bytecode files are small (the largest module compiles to ~60 KB). */
enum { MAX_BYTECODE = 4 << 20 };

static bool not_older(const struct stat *bc, const struct stat *src) {
  if (bc->st_mtim.tv_sec != src->st_mtim.tv_sec) return bc->st_mtim.tv_sec > src->st_mtim.tv_sec;
  return bc->st_mtim.tv_nsec >= src->st_mtim.tv_nsec;
}

static size_t read_uleb128(const unsigned char *p, size_t n, size_t *at) {
  size_t v = 0;
  for (int shift = 0; *at < n && shift < 35; shift += 7) {
    unsigned char b = p[(*at)++];
    v |= (size_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) return v;
  }
  return (size_t)-1;
}

/* True when buf is LuaJIT bytecode whose chunk name is "@" .. src. */
static bool compiled_from(const unsigned char *buf, size_t n, const char *src) {
  if (n < 5 || memcmp(buf, "\x1bLJ", 3) != 0) return false;
  size_t at = 4;
  size_t flags = read_uleb128(buf, n, &at);
  if (flags == (size_t)-1 || (flags & 2)) return false; /* stripped: no name to check */
  size_t len = read_uleb128(buf, n, &at);
  size_t src_len = strlen(src);
  return len == src_len + 1 && at + len <= n && buf[at] == '@' && memcmp(buf + at + 1, src, src_len) == 0;
}

/* The file's bytes (malloc'd), or NULL. */
static unsigned char *read_all(const char *path, size_t size) {
  if (size == 0 || size > MAX_BYTECODE) return NULL;
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  unsigned char *buf = malloc(size);
  if (buf && fread(buf, 1, size, f) != size) free(buf), buf = NULL;
  fclose(f);
  return buf;
}

/* package.loaders entry, before the Lua file searcher: find the file that
 * searcher would load (package.searchpath over package.path); if it is one
 * of tide's (under the source root) and its bytecode under the bytecode root
 * matches it, return the loaded chunk; else nothing, and the next searcher
 * loads the source. Upvalues: source root and bytecode root, each with a
 * trailing '/'. */
static int bytecode_searcher(lua_State *L) {
  const char *name = luaL_checkstring(L, 1);
  size_t root_len;
  const char *root = lua_tolstring(L, lua_upvalueindex(1), &root_len);
  const char *bc_root = lua_tostring(L, lua_upvalueindex(2));
  lua_getglobal(L, "package");
  if (!lua_istable(L, -1)) return 0;
  lua_getfield(L, -1, "searchpath");
  lua_pushstring(L, name);
  lua_getfield(L, -3, "path");
  if (!lua_isfunction(L, -3) || !lua_isstring(L, -1) || lua_pcall(L, 2, 1, 0) != 0) return 0;
  const char *src = lua_tostring(L, -1);
  if (!src || strncmp(src, root, root_len) != 0) return 0; /* not one of tide's files */
  lua_pushfstring(L, "%s%s", bc_root, src + root_len);
  const char *bc = lua_tostring(L, -1);
  struct stat bs, ss;
  if (stat(bc, &bs) != 0 || stat(src, &ss) != 0 || !not_older(&bs, &ss)) return 0;
  unsigned char *buf = read_all(bc, (size_t)bs.st_size);
  if (!buf) return 0;
  bool ok = compiled_from(buf, (size_t)bs.st_size, src) &&
            luaL_loadbuffer(L, (const char *)buf, (size_t)bs.st_size, src) == 0;
  free(buf);
  if (!ok) return 0; /* an error message (if any) is dropped: the source loads instead */
  return 1;
}

void tide_vm_bytecode_open(lua_State *L, const char *source_root, const char *bytecode_root) {
  lua_getglobal(L, "package");
  lua_getfield(L, -1, "loaders");
  if (!lua_istable(L, -1)) {
    lua_pop(L, 2);
    return;
  }
  /* shift loaders 2.. up one and put ours at 2, after the preload searcher */
  int n = (int)lua_objlen(L, -1);
  for (int i = n; i >= 2; i--) {
    lua_rawgeti(L, -1, i);
    lua_rawseti(L, -2, i + 1);
  }
  lua_pushfstring(L, "%s/", source_root);
  lua_pushfstring(L, "%s/", bytecode_root);
  lua_pushcclosure(L, bytecode_searcher, 2);
  lua_rawseti(L, -2, 2);
  lua_pop(L, 2);
}
