# SPDX-License-Identifier: BSD-2-Clause
# A real Slurm (Debian 12's 22.05) for a test, sourced after tap.sh: munged
# on a socket of the test's own, one slurmctld and one slurmd per
# simulated host name, all on 127.0.0.1 (docs/testing.md, "Slurm").
#
#   slurm_start N JOBS_DIR [LINES]: node0001..N in partition debug, the
#     shipped PrologSlurmctld and EpilogSlurmctld (deploy/slurm) writing
#     into JOBS_DIR, and LINES (more partitions, say) at the end of
#     slurm.conf; exports SLURM_CONF; 1 when the nodes are not idle
#     within 30 s
#   slurm_stop: scancel everything, wait until squeue is empty (10 s at
#     most), then stop exactly the PIDs started: every slurmd, slurmctld,
#     munged (killing slurmd first would orphan its slurmstepd)
slurm_pids=()
slurm_start() {
	local n=$1 jobs=$2 extra=${3:-} base i name dir=$PWD/slurm
	mkdir -p "$dir/state" "$dir/spool" "$jobs"
	dd if=/dev/urandom of="$dir/munge.key" bs=1 count=1024 2>/dev/null
	chmod 400 "$dir/munge.key"
	munged -F -f -S "$dir/munge.sock" --key-file="$dir/munge.key" \
		--pid-file="$dir/munged.pid" --log-file="$dir/munged.log" \
		--seed-file="$dir/munged.seed" >"$dir/munged.out" 2>&1 &
	slurm_munged=$!
	for _ in $(seq 1 50); do [ -S "$dir/munge.sock" ] && break; sleep 0.1; done
	# the shipped scripts, pointed at this test's spool directory
	for s in prolog epilog; do
		sed "s|^dir=/run/ibwatch/jobs |dir=$jobs |" \
			"$tap_lib/../../deploy/slurm/ibwatch-$s" >"$dir/$s"
		chmod 755 "$dir/$s"
	done
	base=$(free_port)
	cat >"$dir/slurm.conf" <<EOF
ClusterName=ibw
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$base
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge.sock
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd-%n.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd-%n.log
ProctrackType=proctrack/pgid
TaskPlugin=task/none
SchedulerType=sched/builtin
SelectType=select/linear
ReturnToService=2
MpiDefault=none
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
CommunicationParameters=NoInAddrAny,NoCtldInAddrAny
PrologSlurmctld=$dir/prolog
EpilogSlurmctld=$dir/epilog
NodeName=node[0001-$(printf %04d "$n")] NodeAddr=127.0.0.1 Port=[$((base + 1))-$((base + n))] CPUs=1 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
$extra
EOF
	export SLURM_CONF=$dir/slurm.conf
	slurmctld -D -i >"$dir/slurmctld.out" 2>&1 &
	slurm_pids+=("$!")
	for i in $(seq 1 "$n"); do
		name=$(printf 'node%04d' "$i")
		mkdir -p "$dir/spool/$name"
		slurmd -D -N "$name" >"$dir/slurmd-$name.out" 2>&1 &
		slurm_pids+=("$!")
	done
	# 16 slurmd register in 2-3 s alone; on a loaded 2-core machine
	# (the sanitizer suite beside other work) 10 s was seen not to do
	for _ in $(seq 1 300); do
		[ "$(sinfo -h -p debug -o '%T %D' 2>/dev/null)" = "idle $n" ] && return 0
		sleep 0.1
	done
	sinfo -h -p debug -o '%T %D' >&2
	return 1
}
slurm_stop() {
	local p i
	[ -n "${SLURM_CONF:-}" ] || return 0
	scancel --quiet -u "$(id -un)" 2>/dev/null
	for _ in $(seq 1 100); do
		[ -z "$(squeue -h 2>/dev/null)" ] && break
		sleep 0.1
	done
	# the slurmds, then slurmctld (started first), then munged
	for ((i = ${#slurm_pids[@]} - 1; i >= 0; i--)); do
		kill "${slurm_pids[$i]}" 2>/dev/null
	done
	for p in "${slurm_pids[@]}"; do
		for _ in $(seq 1 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$p" 2>/dev/null
	done
	[ -n "${slurm_munged:-}" ] && kill "$slurm_munged" 2>/dev/null
	slurm_pids=()
	unset SLURM_CONF
}
