#!/bin/sh
# tests/sh/test_dqn.sh — the DQN example learns and ships: examples/dqn/train.lua
# --fast must improve its return (it exits 1 otherwise) and save its policy, and
# build/examples/cartpole_game must play that policy from C for a few hundred
# frames, printing its latency, and replay the greedy episodes train.lua played
# through the same saved graph (same seed, same physics, same returns);
# build/examples/cartpole_script, which asks a sandboxed policy script (tide/vm.h)
# each frame instead, must replay them too.
# Run by tests/run.sh from the repository root (BUILD names the build folder).
set -u
BUILD=${BUILD:-build}
# Lua programs: the Lua collector exits without freeing everything (as tests/run.sh).
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
passed=0
failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=$tmp/out

check() { # check NAME COMMAND...: run it; on failure show its output's tail
  name=$1
  shift
  if "$@" >"$out" 2>&1; then
    passed=$((passed + 1))
  else
    printf 'FAIL %s\n' "$name"
    sed 's/^/  | /' "$out" | tail -n 15
    failed=$((failed + 1))
  fi
}

train_fast() {
  "$BUILD/tide" examples/dqn/train.lua --fast --out "$tmp/run" || return 1
  grep -q '^fast: average return of the first 10 episodes .*, of the last 10 ' "$out" || return 1
  [ -f "$tmp/run/policy/saved_model.json" ] && [ -f "$tmp/run/greedy_returns.txt" ]
}
check "examples/dqn/train.lua --fast: the return improves, the policy is saved" train_fast

game_runs() {
  "$BUILD/examples/cartpole_game" "$tmp/run" 300 || return 1
  grep -q '^frames: 300, episodes finished: ' "$out" &&
    grep -qE '^per-frame latency: median [0-9.]+ us, p99 [0-9.]+ us$' "$out"
}
check "cartpole_game plays the saved policy for 300 frames and prints its latency" game_runs

# train.lua played 5 greedy episodes from seed 12345; 5 episodes take at most
# 2,500 frames. The C game's first 5 returns must be the same numbers.
same_returns() {
  want=$(sed -n 's/^seed 12345 returns \(.*\)$/\1/p' "$tmp/run/greedy_returns.txt")
  "$BUILD/examples/cartpole_game" "$tmp/run" 2500 12345 || return 1
  got=$(sed -n 's/^returns (seed 12345): //p' "$out" | cut -d' ' -f1-5)
  echo "Lua, through the saved graph: '$want'; the C game: '$got'"
  [ -n "$want" ] && [ "$want" = "$got" ]
}
check "cartpole_game replays train.lua's greedy episodes: same seed, same returns" same_returns

# A large frame budget: make test runs on loaded machines, where a 20 ms
# frame budget is sometimes passed.
script_runs() {
  "$BUILD/examples/cartpole_script" "$tmp/run" 300 12345 5000 || return 1
  grep -q '^frames: 300, episodes finished: ' "$out" &&
    grep -qE '^frames over the 5000 ms budget: [0-9]+$' "$out" &&
    grep -qE '^per-frame latency: median [0-9.]+ us, p99 [0-9.]+ us$' "$out"
}
check "cartpole_script asks the sandboxed policy script for 300 frames and prints its latency" script_runs

# No frame may pass the budget, so that every frame is the script's decision
# and the episodes must be train.lua's.
script_same_returns() {
  want=$(sed -n 's/^seed 12345 returns \(.*\)$/\1/p' "$tmp/run/greedy_returns.txt")
  "$BUILD/examples/cartpole_script" "$tmp/run" 2500 12345 5000 || return 1
  grep -q '^frames over the 5000 ms budget: 0$' "$out" || return 1
  got=$(sed -n 's/^returns (seed 12345): //p' "$out" | cut -d' ' -f1-5)
  echo "Lua, through the saved graph: '$want'; the script in the sandbox: '$got'"
  [ -n "$want" ] && [ "$want" = "$got" ]
}
check "cartpole_script replays train.lua's greedy episodes: same seed, same returns" script_same_returns

bad_args() {
  "$BUILD/examples/cartpole_game" "$tmp/run" 0 && return 1
  grep -q "FRAMES must be a whole number >= 1, got '0'" "$out" || return 1
  "$BUILD/examples/cartpole_game" "$tmp/nowhere" 10 && return 1
  grep -q "nowhere/policy" "$out" || return 1
  "$BUILD/examples/cartpole_script" "$tmp/run" 10 1 0 && return 1
  grep -q "BUDGET_MS must be a whole number from 1 to 60000, got '0'" "$out" || return 1
  "$BUILD/examples/cartpole_script" "$tmp/nowhere" 10 && return 1
  grep -q "cartpole_script: .*nowhere" "$out"
}
check "cartpole_game, cartpole_script: bad arguments and a missing policy are errors naming them" bad_args

echo "sh dqn: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
