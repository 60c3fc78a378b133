#!/bin/sh
# tests/sh/test_embed_model.sh — end to end: a Lua script trains a Keras model
# and saves it (model:save) and a traced function (tide.saved_model.save); a C
# program loads each with tide_model_load and its outputs must match the Lua
# predictions (tests/sh/embed_model.lua, test_model --predict). Then the
# complete example of docs/embedding.md, compiled as C99, must print them too.
set -u
BUILD=${BUILD:-build}
passed=0
failed=0
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

# Lua programs: the collector exits without freeing everything (tests/run.sh says why).
if ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" "$BUILD/tide" tests/sh/embed_model.lua "$dir"; then
  passed=$((passed + 1))
else
  echo "FAIL tests/sh/embed_model.lua"
  failed=$((failed + 1))
fi
for m in keras traced; do
  if "$BUILD/tests/test_model" --predict "$dir/$m" "$dir/$m.txt"; then
    passed=$((passed + 1))
  else
    echo "FAIL $m: the C outputs differ from Lua's (or the model did not load)"
    failed=$((failed + 1))
  fi
done

# docs/embedding.md's complete example: the ```c block after its heading.
awk '/^### A complete example: running a saved model/ { f = 1 } f && /^```c$/ { c = 1; next } c && /^```$/ { exit } c { print }' \
  docs/embedding.md >"$dir/classify.c"
san=""
[ "${SANITIZE:-0}" = 1 ] && san="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
# shellcheck disable=SC2086 # san is a list of flags
if [ -s "$dir/classify.c" ] &&
   ${CC:-cc} -std=c99 -Wall -Wextra -pedantic -Werror $san -Ikernels/include "$dir/classify.c" -L"$BUILD" -ltide \
     -Wl,-rpath,"$(cd "$BUILD" && pwd)" -o "$dir/classify"; then
  passed=$((passed + 1))
  # keras.txt: "rows cols", rows lines of inputs, the output count, rows lines of outputs.
  rows=$(head -n 1 "$dir/keras.txt" | cut -d' ' -f1)
  sed -n "2,$((rows + 1))p" "$dir/keras.txt" | "$dir/classify" "$dir/keras" >"$dir/classify.out"
  rc=$?
  sed -n "$((rows + 3)),$((2 * rows + 2))p" "$dir/keras.txt" >"$dir/classify.want"
  if [ "$rc" -eq 0 ] && [ "$(wc -l <"$dir/classify.out")" -eq "$rows" ] &&
     paste -d'|' "$dir/classify.out" "$dir/classify.want" | awk -F'|' '{
       n = split($1, a, " "); m = split($2, b, " "); if (n != m || n == 0) exit 1
       for (i = 1; i <= n; i++) { d = a[i] - b[i]; if (d < 0) d = -d; if (d > 1e-5) exit 1 } }'; then
    passed=$((passed + 1))
  else
    echo "FAIL docs/embedding.md's example (exit $rc) printed:"; cat "$dir/classify.out"
    echo "but Lua predicted:"; cat "$dir/classify.want"
    failed=$((failed + 1))
  fi
else
  echo "FAIL docs/embedding.md's complete example does not compile as C99"
  failed=$((failed + 1))
fi

echo "sh embed_model: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
