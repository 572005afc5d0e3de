#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Install every build, run and test dependency of ibwatch on Debian 12.
# Idempotent: does nothing when everything is present, and runs
# `apt-get update` only when a package is missing.
set -eu

PKGS="
build-essential cmake pkg-config clang-format
libibumad-dev libibmad-dev
libsnmp-dev libmicrohttpd-dev libjansson-dev libcmocka-dev zlib1g-dev
ibsim-utils libumad2sim0 opensm infiniband-diags
snmpd snmp snmptrapd curl jq python3 bc
prometheus prometheus-node-exporter prometheus-alertmanager victoria-metrics
monitoring-plugins-basic monitoring-plugins-standard openssl wrk
smitools libinih-dev systemd groff-base libjs-d3
chromium chromium-driver python3-selenium slurm-wlm munge
git dpkg-dev debhelper lintian rpm
stress-ng
"

missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
	    grep -q 'install ok installed'; then
		missing="$missing $p"
	fi
done

[ -z "$missing" ] && exit 0

SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"

echo "install-deps: installing:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
# Try without refreshing the lists first; refresh only if that fails.
if ! $SUDO apt-get install -y --no-install-recommends $missing; then
	$SUDO apt-get update
	$SUDO apt-get install -y --no-install-recommends $missing
fi

# victoria-metrics and prometheus-alertmanager enable and start a system
# daemon on install, listening on every interface (:8428; :9093 and the
# gossip cluster's 0.0.0.0:9094, TCP and UDP). The tests run their own,
# on loopback (tests/lib/store.sh): the ones just installed are stopped
# and disabled. `systemctl disable` works without a running systemd too
# (a container, where policy-rc.d kept them from starting) and takes
# their SysV links as well.
for svc in victoria-metrics prometheus-alertmanager; do
	case " $missing " in *" $svc "*) ;; *) continue ;; esac
	command -v systemctl >/dev/null 2>&1 || continue
	if [ -d /run/systemd/system ]; then
		$SUDO systemctl disable --now "$svc.service"
	else
		$SUDO systemctl disable "$svc.service"
	fi
done
