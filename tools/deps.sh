#!/bin/sh
# Installs the Debian packages tide needs to build, test and demo; idempotent:
# a machine that already has them pays one dpkg query and touches nothing.
# Usage: tools/deps.sh [bench]   (bench adds the peers that `make bench` runs)
set -eu

PACKAGES="build-essential pkg-config luajit libluajit-5.1-dev libopenblas-dev
liblapacke-dev libreadline-dev zlib1g-dev lua-busted dataset-fashion-mnist libdnnl-dev bsdutils
libcjson-dev libprotobuf-c-dev protobuf-c-compiler libpng-dev libjpeg62-turbo-dev
libpcre2-dev libopenmpi-dev openmpi-bin libhdf5-dev libzip-dev libicu-dev"
if [ "${1:-}" = bench ]; then
  PACKAGES="$PACKAGES python3 python3-torch python3-venv"
fi

missing=""
for p in $PACKAGES; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  case "$status" in
    *"install ok installed"*) ;;
    *) missing="$missing $p" ;;
  esac
done

[ -z "$missing" ] && exit 0

echo "tools/deps.sh: installing$missing"
if [ "$(id -u)" -ne 0 ]; then
  echo "tools/deps.sh: missing packages and not root; run as root or install:$missing" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing
