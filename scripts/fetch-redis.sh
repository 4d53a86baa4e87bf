#!/usr/bin/env bash
# Provide a real redis-server for the tests at third_party/redis/redis-server (the Makefile
# points TEST_REDIS_SERVER at it):
#   1. the redis-server on PATH, when there is one (linked);
#   2. else Debian's packages, unpacked there without root: redis-server and redis-tools (which
#      holds the binary) and the libraries they need beyond a base system (jemalloc, lzf,
#      libatomic, OpenSSL 3), run through a wrapper that sets LD_LIBRARY_PATH;
#   3. else, as root on a machine whose package lists are empty, the lists are refreshed and
#      step 2 is tried again, then `apt-get install -y redis-server`.
# Idempotent: a working binary in place is kept.
#
#   scripts/fetch-redis.sh
set -euo pipefail

cd "$(dirname "$0")/.."
dest="$PWD/third_party/redis"
bin="$dest/redis-server"
if [ -x "$bin" ] && "$bin" --version >/dev/null 2>&1; then
	exit 0
fi
rm -rf "$dest"
mkdir -p "$dest"

if sys=$(command -v redis-server); then
	ln -s "$sys" "$bin"
	"$bin" --version
	exit 0
fi

packages=(redis-server redis-tools libjemalloc2 liblzf1 libatomic1 libssl3)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root=0
[ "$(id -u)" = 0 ] && root=1
sandbox=()
[ "$root" = 1 ] && sandbox=(-o APT::Sandbox::User=root) # _apt cannot write into a private temporary folder
download() { (cd "$work" && apt-get "${sandbox[@]}" download "${packages[@]}" >/dev/null); }
if ! download; then
	if [ "$root" = 0 ]; then
		echo "fetch-redis: apt-get download ${packages[*]} failed and this is not root; install redis-server or set TEST_REDIS_SERVER" >&2
		exit 1
	fi
	apt-get update -qq
	if ! download; then
		apt-get install -y -qq redis-server
		ln -s "$(command -v redis-server)" "$bin"
		"$bin" --version
		exit 0
	fi
fi

for deb in "$work"/*.deb; do
	dpkg-deb -x "$deb" "$dest/root"
done
multiarch=$(basename "$(echo "$dest"/root/usr/lib/*-linux-gnu)")
cat >"$bin" <<WRAPPER
#!/bin/sh
# Debian's redis-server, unpacked by scripts/fetch-redis.sh, with the libraries unpacked beside
# it; found from this file's own place, so that the folder may move.
here=\$(dirname "\$(readlink -f "\$0")")
LD_LIBRARY_PATH="\$here/root/usr/lib/$multiarch\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}" exec "\$here/root/usr/bin/redis-server" "\$@"
WRAPPER
chmod +x "$bin"
"$bin" --version
