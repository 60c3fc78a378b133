/* vm/patterns.c — Lua's pattern functions for a VM with a budget: string.find,
 * match, gmatch and gsub with a matcher that charges its steps to the call's budgets.
 *
 * LuaJIT's matcher runs inside one C call, where no hook fires: a pattern
 * that backtracks catastrophically (string.rep("a*", 30) .. "b" against 60
 * a's) never returns, whatever the budget. This is the same matcher (LuaJIT's
 * lib_string.c, from Lua 5.1's lstrlib.c; MIT licence, (c) Mike Pall and
 * Lua.org, PUC-Rio), with the same results and messages, counting a step at
 * every match attempt and every repetition it tries: each STEP_CHECK steps
 * are charged to the instruction budget and the time budget is looked at, and
 * a spent budget raises its error from inside the match. A plain find (no
 * pattern characters, or `plain`) is linear and stays LuaJIT's own. */
#include "vm_state.h"

#include <lauxlib.h>
#include <string.h>

enum { STEP_CHECK = 1024, MAX_CAPTURES = 32, MAX_DEPTH = 200 };
#define CAP_UNFINISHED (-1)
#define CAP_POSITION (-2)
#define L_ESC '%'
#define uchar(c) ((unsigned char)(c))

typedef struct MatchState {
  const char *src_init, *src_end;
  lua_State *L;
  tide_vm *vm;
  unsigned steps; /* since the last charge */
  int level;      /* captures, finished or not */
  int depth;      /* nested match calls */
  struct {
    const char *init;
    ptrdiff_t len;
  } capture[MAX_CAPTURES];
} MatchState;

/* One step; every STEP_CHECK, charge them and raise when a budget is spent. */
static inline void step(MatchState *ms) {
  if (++ms->steps < STEP_CHECK) return;
  ms->steps = 0;
  if (tide_vm_budget_charge(ms->vm, STEP_CHECK)) tide_vm_budget_raise(ms->L, ms->vm);
}

/* ---- character classes: ASCII only, as LuaJIT's (no locale) ---- */

static int is_lower(int c) { return c >= 'a' && c <= 'z'; }
static int is_upper(int c) { return c >= 'A' && c <= 'Z'; }
static int is_digit(int c) { return c >= '0' && c <= '9'; }
static int is_alpha(int c) { return is_lower(c) || is_upper(c); }
static int is_alnum(int c) { return is_alpha(c) || is_digit(c); }
static int is_space(int c) { return c == ' ' || (c >= '\t' && c <= '\r'); }
static int is_cntrl(int c) { return c < 32 || c == 127; }
static int is_punct(int c) { return c > 32 && c < 127 && !is_alnum(c); }
static int is_xdigit(int c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

static int match_class(int c, int cl) {
  int res;
  switch (cl | 0x20) { /* the class letter in lower case */
  case 'a': res = is_alpha(c); break;
  case 'c': res = is_cntrl(c); break;
  case 'd': res = is_digit(c); break;
  case 'g': res = is_alnum(c) || is_punct(c); break;
  case 'l': res = is_lower(c); break;
  case 'p': res = is_punct(c); break;
  case 's': res = is_space(c); break;
  case 'u': res = is_upper(c); break;
  case 'w': res = is_alnum(c); break;
  case 'x': res = is_xdigit(c); break;
  case 'z': res = c == 0; break;
  default: return cl == c;
  }
  if (!is_alpha(cl)) return cl == c;
  return is_lower(cl) ? res : !res;
}

static int check_capture(MatchState *ms, int l) {
  l -= '1';
  if (l < 0 || l >= ms->level || ms->capture[l].len == CAP_UNFINISHED)
    return luaL_error(ms->L, "invalid capture index");
  return l;
}

static int capture_to_close(MatchState *ms) {
  int level = ms->level;
  for (level--; level >= 0; level--)
    if (ms->capture[level].len == CAP_UNFINISHED) return level;
  return luaL_error(ms->L, "invalid pattern capture");
}

static const char *classend(MatchState *ms, const char *p) {
  switch (*p++) {
  case L_ESC:
    if (*p == '\0') luaL_error(ms->L, "malformed pattern (ends with '%%')");
    return p + 1;
  case '[':
    if (*p == '^') p++;
    do { /* look for a ']' */
      if (*p == '\0') luaL_error(ms->L, "malformed pattern (missing ']')");
      if (*(p++) == L_ESC && *p != '\0') p++; /* skip escapes (e.g. '%]') */
    } while (*p != ']');
    return p + 1;
  default: return p;
  }
}

static int matchbracketclass(int c, const char *p, const char *ec) {
  int sig = 1;
  if (*(p + 1) == '^') {
    sig = 0;
    p++; /* skip the '^' */
  }
  while (++p < ec) {
    if (*p == L_ESC) {
      p++;
      if (match_class(c, uchar(*p))) return sig;
    } else if (*(p + 1) == '-' && p + 2 < ec) {
      p += 2;
      if (uchar(*(p - 2)) <= c && c <= uchar(*p)) return sig;
    } else if (uchar(*p) == c) {
      return sig;
    }
  }
  return !sig;
}

static int singlematch(int c, const char *p, const char *ep) {
  switch (*p) {
  case '.': return 1;
  case L_ESC: return match_class(c, uchar(*(p + 1)));
  case '[': return matchbracketclass(c, p, ep - 1);
  default: return uchar(*p) == c;
  }
}

static const char *match(MatchState *ms, const char *s, const char *p);

static const char *matchbalance(MatchState *ms, const char *s, const char *p) {
  if (*p == 0 || *(p + 1) == 0) luaL_error(ms->L, "unbalanced pattern");
  if (*s != *p) return NULL;
  int b = *p, e = *(p + 1), cont = 1;
  while (++s < ms->src_end) {
    step(ms);
    if (*s == e) {
      if (--cont == 0) return s + 1;
    } else if (*s == b) {
      cont++;
    }
  }
  return NULL; /* the string ends out of balance */
}

static const char *max_expand(MatchState *ms, const char *s, const char *p, const char *ep) {
  ptrdiff_t i = 0;
  while (s + i < ms->src_end && singlematch(uchar(*(s + i)), p, ep)) {
    step(ms);
    i++;
  }
  while (i >= 0) { /* the most repetitions first, then one fewer */
    const char *res = match(ms, s + i, ep + 1);
    if (res) return res;
    i--;
  }
  return NULL;
}

static const char *min_expand(MatchState *ms, const char *s, const char *p, const char *ep) {
  for (;;) {
    const char *res = match(ms, s, ep + 1);
    if (res) return res;
    if (s < ms->src_end && singlematch(uchar(*s), p, ep)) s++; /* one more repetition */
    else return NULL;
  }
}

static const char *start_capture(MatchState *ms, const char *s, const char *p, int what) {
  int level = ms->level;
  if (level >= MAX_CAPTURES) luaL_error(ms->L, "too many captures");
  ms->capture[level].init = s;
  ms->capture[level].len = what;
  ms->level = level + 1;
  const char *res = match(ms, s, p);
  if (!res) ms->level--; /* undo the capture */
  return res;
}

static const char *end_capture(MatchState *ms, const char *s, const char *p) {
  int l = capture_to_close(ms);
  ms->capture[l].len = s - ms->capture[l].init; /* close it */
  const char *res = match(ms, s, p);
  if (!res) ms->capture[l].len = CAP_UNFINISHED; /* undo */
  return res;
}

static const char *match_capture(MatchState *ms, const char *s, int l) {
  l = check_capture(ms, l);
  size_t len = (size_t)ms->capture[l].len;
  if ((size_t)(ms->src_end - s) >= len && memcmp(ms->capture[l].init, s, len) == 0) return s + len;
  return NULL;
}

static const char *match(MatchState *ms, const char *s, const char *p) {
  if (++ms->depth > MAX_DEPTH) luaL_error(ms->L, "pattern too complex");
init: /* goto instead of tail recursion */
  step(ms);
  switch (*p) {
  case '(':
    if (*(p + 1) == ')') s = start_capture(ms, s, p + 2, CAP_POSITION);
    else s = start_capture(ms, s, p + 1, CAP_UNFINISHED);
    break;
  case ')':
    s = end_capture(ms, s, p + 1);
    break;
  case L_ESC:
    switch (*(p + 1)) {
    case 'b': /* balanced */
      s = matchbalance(ms, s, p + 2);
      if (!s) break;
      p += 4;
      goto init;
    case 'f': { /* frontier */
      p += 2;
      if (*p != '[') luaL_error(ms->L, "missing '[' after '%%f' in pattern");
      const char *ep = classend(ms, p);
      char previous = s == ms->src_init ? '\0' : *(s - 1);
      if (matchbracketclass(uchar(previous), p, ep - 1) || !matchbracketclass(uchar(*s), p, ep - 1)) {
        s = NULL;
        break;
      }
      p = ep;
      goto init;
    }
    default:
      if (is_digit(uchar(*(p + 1)))) { /* %0-%9: a capture again */
        s = match_capture(ms, s, uchar(*(p + 1)));
        if (!s) break;
        p += 2;
        goto init;
      }
      goto dflt;
    }
    break;
  case '\0': /* the pattern's end: matched */
    break;
  case '$':
    if (*(p + 1) != '\0') goto dflt; /* not the last character: a plain '$' */
    if (s != ms->src_end) s = NULL;
    break;
  default:
  dflt: {
    const char *ep = classend(ms, p);
    int m = s < ms->src_end && singlematch(uchar(*s), p, ep);
    switch (*ep) {
    case '?': {
      const char *res;
      if (m && (res = match(ms, s + 1, ep + 1)) != NULL) {
        s = res;
        break;
      }
      p = ep + 1;
      goto init;
    }
    case '*': s = max_expand(ms, s, p, ep); break;
    case '+': s = m ? max_expand(ms, s + 1, p, ep) : NULL; break;
    case '-': s = min_expand(ms, s, p, ep); break;
    default:
      if (m) {
        s++;
        p = ep;
        goto init;
      }
      s = NULL;
      break;
    }
    break;
  }
  }
  ms->depth--;
  return s;
}

static void push_onecapture(MatchState *ms, int i, const char *s, const char *e) {
  if (i >= ms->level) {
    if (i == 0) lua_pushlstring(ms->L, s, (size_t)(e - s)); /* the whole match */
    else luaL_error(ms->L, "invalid capture index");
  } else {
    ptrdiff_t l = ms->capture[i].len;
    if (l == CAP_UNFINISHED) luaL_error(ms->L, "unfinished capture");
    if (l == CAP_POSITION) lua_pushinteger(ms->L, ms->capture[i].init - ms->src_init + 1);
    else lua_pushlstring(ms->L, ms->capture[i].init, (size_t)l);
  }
}

static int push_captures(MatchState *ms, const char *s, const char *e) {
  int nlevels = (ms->level == 0 && s) ? 1 : ms->level;
  luaL_checkstack(ms->L, nlevels, "too many captures");
  for (int i = 0; i < nlevels; i++) push_onecapture(ms, i, s, e);
  return nlevels;
}

static void ms_init(MatchState *ms, lua_State *L, const char *s, size_t len) {
  ms->L = L;
  ms->vm = lua_touserdata(L, lua_upvalueindex(1));
  ms->src_init = s;
  ms->src_end = s + len;
  ms->steps = 0;
}

/* True when p has none of the characters that make a pattern (LuaJIT's test). */
static int is_plain(const char *p, size_t len) {
  for (size_t i = 0; i < len; i++)
    if (strchr("^$*+?.([%-", p[i]) && p[i]) return 0;
  return 1;
}

static int str_find_aux(lua_State *L, int find) {
  size_t ls, lp;
  const char *s = luaL_checklstring(L, 1, &ls);
  const char *p = luaL_checklstring(L, 2, &lp);
  ptrdiff_t start = luaL_optinteger(L, 3, 1);
  if (start < 0) start += (ptrdiff_t)ls;
  else start--;
  if (start < 0) start = 0;
  if ((size_t)start > ls) start = (ptrdiff_t)ls;
  if (find && (lua_toboolean(L, 4) || is_plain(p, lp))) { /* a plain find: LuaJIT's own (linear) */
    lua_pushvalue(L, lua_upvalueindex(2));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
    return lua_gettop(L);
  }
  MatchState ms;
  ms_init(&ms, L, s, ls);
  const char *sstr = s + start;
  int anchor = *p == '^';
  if (anchor) p++;
  do {
    ms.level = ms.depth = 0;
    step(&ms);
    const char *e = match(&ms, sstr, p);
    if (e) {
      if (find) {
        lua_pushinteger(L, sstr - s + 1);
        lua_pushinteger(L, e - s);
        return push_captures(&ms, NULL, NULL) + 2;
      }
      return push_captures(&ms, sstr, e);
    }
  } while (sstr++ < ms.src_end && !anchor);
  lua_pushnil(L);
  return 1;
}

static int str_find(lua_State *L) { return str_find_aux(L, 1); }
static int str_match(lua_State *L) { return str_find_aux(L, 0); }

/* gmatch's iterator: upvalues 1 the VM, 2 the string, 3 the pattern, 4 the position. */
static int gmatch_aux(lua_State *L) {
  size_t ls;
  const char *s = lua_tolstring(L, lua_upvalueindex(2), &ls);
  const char *p = lua_tostring(L, lua_upvalueindex(3));
  MatchState ms;
  ms_init(&ms, L, s, ls);
  for (const char *src = s + (size_t)lua_tointeger(L, lua_upvalueindex(4)); src <= ms.src_end; src++) {
    ms.level = ms.depth = 0;
    step(&ms);
    const char *e = match(&ms, src, p);
    if (e) {
      lua_Integer pos = e - s;
      if (e == src) pos++; /* an empty match: move on */
      lua_pushinteger(L, pos);
      lua_replace(L, lua_upvalueindex(4));
      return push_captures(&ms, src, e);
    }
  }
  return 0;
}

static int str_gmatch(lua_State *L) {
  luaL_checkstring(L, 1);
  luaL_checkstring(L, 2);
  lua_settop(L, 2);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_pushinteger(L, 0);
  lua_pushcclosure(L, gmatch_aux, 4);
  return 1;
}

static void add_s(MatchState *ms, luaL_Buffer *b, const char *s, const char *e) {
  size_t l;
  const char *news = lua_tolstring(ms->L, 3, &l);
  for (size_t i = 0; i < l; i++) {
    if (news[i] != L_ESC) {
      luaL_addchar(b, news[i]);
      continue;
    }
    i++; /* skip the escape */
    if (!is_digit(uchar(news[i]))) {
      luaL_addchar(b, news[i]);
    } else if (news[i] == '0') {
      luaL_addlstring(b, s, (size_t)(e - s));
    } else {
      push_onecapture(ms, news[i] - '1', s, e);
      luaL_addvalue(b);
    }
  }
}

static void add_value(MatchState *ms, luaL_Buffer *b, const char *s, const char *e) {
  lua_State *L = ms->L;
  switch (lua_type(L, 3)) {
  case LUA_TNUMBER:
  case LUA_TSTRING: add_s(ms, b, s, e); return;
  case LUA_TFUNCTION: {
    lua_pushvalue(L, 3);
    int n = push_captures(ms, s, e);
    lua_call(L, n, 1);
    break;
  }
  case LUA_TTABLE:
    push_onecapture(ms, 0, s, e);
    lua_gettable(L, 3);
    break;
  }
  if (!lua_toboolean(L, -1)) { /* nil or false: keep the original text */
    lua_pop(L, 1);
    lua_pushlstring(L, s, (size_t)(e - s));
  } else if (!lua_isstring(L, -1)) {
    luaL_error(L, "invalid replacement value (a %s)", luaL_typename(L, -1));
  }
  luaL_addvalue(b);
}

static int str_gsub(lua_State *L) {
  size_t srcl;
  const char *src = luaL_checklstring(L, 1, &srcl);
  const char *p = luaL_checkstring(L, 2);
  int tr = lua_type(L, 3);
  int max_s = luaL_optint(L, 4, (int)(srcl + 1));
  int anchor = *p == '^';
  if (anchor) p++;
  luaL_argcheck(L, tr == LUA_TNUMBER || tr == LUA_TSTRING || tr == LUA_TFUNCTION || tr == LUA_TTABLE, 3,
                "string/function/table expected");
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  MatchState ms;
  ms_init(&ms, L, src, srcl);
  int n = 0;
  while (n < max_s) {
    ms.level = ms.depth = 0;
    step(&ms);
    const char *e = match(&ms, src, p);
    if (e) {
      n++;
      add_value(&ms, &b, src, e);
    }
    if (e && e > src) src = e; /* a non-empty match: skip it */
    else if (src < ms.src_end) luaL_addchar(&b, *src++);
    else break;
    if (anchor) break;
  }
  luaL_addlstring(&b, src, (size_t)(ms.src_end - src));
  luaL_pushresult(&b);
  lua_pushinteger(L, n);
  return 2;
}

/* Replace the string library's pattern functions (in the table itself, which
 * strings' methods reach too) with the counting ones; inside a protected call. */
void tide_vm_patterns_open(tide_vm *vm) {
  lua_State *L = vm->L;
  lua_getglobal(L, "string");
  lua_pushlightuserdata(L, vm);
  lua_getfield(L, -2, "find");
  lua_pushcclosure(L, str_find, 2); /* LuaJIT's find kept for plain searches */
  lua_setfield(L, -2, "find");
  static const struct {
    const char *name;
    lua_CFunction fn;
  } fns[] = {{"match", str_match}, {"gmatch", str_gmatch}, {"gsub", str_gsub}};
  for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
    lua_pushlightuserdata(L, vm);
    lua_pushcclosure(L, fns[i].fn, 1);
    lua_setfield(L, -2, fns[i].name);
  }
  lua_pop(L, 1);
}
