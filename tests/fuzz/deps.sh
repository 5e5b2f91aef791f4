#!/bin/sh
# What `make fuzz` needs beyond .ci/deps: clang 14 and its sanitizer and
# libFuzzer runtimes (libclang-rt-14-dev, only recommended by clang-14,
# holds libclang_rt.fuzzer).  Installed with apt-get only when missing.
set -e
sh "$(dirname "$0")/../../.ci/deps"
need=""
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "ok installed"; }
for p in clang-14 libclang-rt-14-dev; do
	have_pkg "$p" || need="$need $p"
done
[ -z "$need" ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "skel: missing packages:$need (run 'make fuzz' as root)" >&2
	exit 1
fi
echo "installing:$need"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends $need
