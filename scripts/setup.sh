#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs what a fresh Debian 12 machine (JDK, Maven, gcc) lacks to build and test kube-verdict.
# clang-format (Debian 12: version 14) checks the C shim's style in `verify` (native/.clang-format).
# chromium and chromium-driver: the web console's browser test (ConsoleEndToEndTest, Selenium).
# Idempotent and quiet when nothing is missing.
set -euo pipefail

packages=(libnetfilter-queue-dev libnetfilter-conntrack-dev libnftables-dev libnftnl-dev libmnl-dev nftables iptables
          iproute2 conntrack procps kmod nodejs npm clang-format chromium chromium-driver)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Node.js may come from elsewhere than Debian (the machine image); only npm's presence matters.
if command -v node >/dev/null && command -v npm >/dev/null; then
  missing=("${missing[@]/nodejs}"); missing=("${missing[@]/npm}")
fi
missing=($(printf '%s\n' "${missing[@]}" | grep -v '^$' || true))

if (( ${#missing[@]} )); then
  if [[ $(id -u) -ne 0 ]]; then
    echo "setup: missing packages: ${missing[*]} (run as root to install them)" >&2
    exit 1
  fi
  echo "setup: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Kernel modules the data plane uses; built-in or loadable, either is fine.
for m in nf_tables nfnetlink_queue nft_queue nft_compat xt_NFQUEUE nf_conntrack veth; do
  modprobe -q "$m" 2>/dev/null || true
done

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# The Maven wrapper's Maven, fetched once into ~/.m2/wrapper.
(cd "$root" && ./mvnw -q -B -v >/dev/null)

# The third-party gRPC reflection client the control-plane tests run (package-lock.json pins it).
node_dir="$root/control-plane/src/test/node"
if [[ ! -d "$node_dir/node_modules" ]]; then
  (cd "$node_dir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
fi

# promtool, for the tests that check the alert rules and dashboard queries (and metrics): Debian's
# prometheus package unpacked into a tools directory, never installed as a service or started.
tools="${KUBE_VERDICT_TOOLS:-$HOME/.cache/kube-verdict-tools}"
if [[ ! -x "$tools/prometheus/usr/bin/promtool" ]]; then
  download="$(mktemp -d)"
  if ! (cd "$download" && apt-get download prometheus >/dev/null 2>&1); then
    # Stale or missing package lists; refreshing them needs root.
    [[ $(id -u) -eq 0 ]] && apt-get update -qq >/dev/null
    (cd "$download" && apt-get download prometheus >/dev/null 2>&1) \
      || { echo "setup: could not download Debian's prometheus package for promtool" >&2; exit 1; }
  fi
  mkdir -p "$tools/prometheus"
  dpkg-deb -x "$download"/prometheus_*.deb "$tools/prometheus"
  rm -f "$tools/prometheus/usr/bin/prometheus"   # the server: not needed, never run
  rm -rf "$download"
  echo "setup: promtool in $tools/prometheus/usr/bin" >&2
fi
