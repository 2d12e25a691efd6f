#!/usr/bin/env bash
# Installs the Debian packages the test suite drives, if they are missing:
# chromium (the benchmarks' browser), chromium-headless-shell (the browser tests'), nginx (the
# replica test) and redis-server (the shared poll store's tests, through harness/redis.py). Only the binaries are
# used: each test starts its own process on a free port.
set -euo pipefail
need=()
[ -x /usr/bin/chromium ] || need+=(chromium fonts-dejavu-core)
[ -x /usr/lib/chromium/chromium-headless-shell ] || need+=(chromium-headless-shell)
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || need+=(nginx)
command -v redis-server >/dev/null 2>&1 || [ -x /usr/bin/redis-server ] || need+=(redis-server)
[ ${#need[@]} -eq 0 ] && exit 0
echo "Installing Debian packages: ${need[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
# Debian starts and enables a freshly installed redis-server under systemd: the tests start their own, so
# stop and disable the one just installed (one that was there before is left as it was).
if [[ " ${need[*]} " == *" redis-server "* ]] && [ -d /run/systemd/system ]; then
    $sudo systemctl disable --now redis-server >/dev/null 2>&1 || true
fi
