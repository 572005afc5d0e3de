#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Run a command with the simulator's preload libraries, as every libibumad
# program on the simulated fabric must be.
[ -n "${IBW_SIM_PRELOAD:-}" ] || { echo "preloaded.sh: no fabric (IBW_SIM_PRELOAD unset)" >&2; exit 2; }
LD_PRELOAD=$IBW_SIM_PRELOAD exec "$@"
