#!/bin/bash
# cluster-test: run a 4-chain Fashion-MNIST run as a Slurm array job on a
# one-host cluster started here, requeue one task in the middle, and check
# that every chain equals the same run's chain in one process, byte for byte.
#
# Needs root (it installs slurm-wlm and munge when missing and runs the
# daemons as root). Everything it starts lives in a temporary state
# directory (its own slurm.conf, munge key and socket, ports on loopback)
# and is stopped by process id at the end. Usage (from the repository):
#
#	make cluster-test            # or: scripts/cluster-test.sh [BIN] [DATA]
#
# KEEP=1 keeps the state directory. See docs/cluster.md.
set -uo pipefail

BIN=$(readlink -f "${1:-bin/ptsghmc}")
DATA=${2:-/usr/share/datasets/fashion-mnist}
CHAINS=4
REQUEUE_TASK=2 # requeued by scontrol requeue (as preemption would be)
LIMIT_TASK=3   # stopped near its time limit by --signal (it requeues itself)
# A small run: about 10 s of one core per chain here.
TRAIN=(--data "$DATA" --train-size 2000 --validation 500 --arch 784-50-10 --sampler sgnht
	--steps 6000 --burnin 1500 --thin 100 --batch 64 --checkpoint-every 300 --log-every 100 --seed 7)
STEPS=6000

say() { echo "cluster-test: $*"; }
die() { say "FAIL: $*"; exit 1; }

[ "$(id -u)" = 0 ] || die "run as root (it installs packages and starts slurmctld, slurmd and munged)"
[ -x "$BIN" ] || die "no ptsghmc binary at $BIN (make build)"
[ -e "$DATA/train-images-idx3-ubyte.gz" ] || [ -e "$DATA/train-images-idx3-ubyte" ] || die "no Fashion-MNIST in $DATA (apt-get install dataset-fashion-mnist)"

# --- packages -------------------------------------------------------------
missing=""
for p in slurmctld slurmd slurm-client munge; do
	dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
if [ -n "$missing" ]; then
	say "installing slurm-wlm munge (missing:$missing)"
	# Keep the packages' own services from starting: this test starts its own.
	policy=""
	if [ ! -e /usr/sbin/policy-rc.d ]; then
		printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d && policy=1
	fi
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null
	rc=$?
	[ -n "$policy" ] && rm -f /usr/sbin/policy-rc.d
	[ $rc = 0 ] || die "apt-get install slurm-wlm munge failed"
fi

# --- state directory, munge ---------------------------------------------------
T=$(mktemp -d /tmp/ptsghmc-cluster.XXXXXX)
chmod 755 "$T"
PIDS=()
cleanup() {
	if [ -n "${JOB:-}" ] && [ -n "${SLURM_CONF:-}" ]; then scancel "$JOB" >/dev/null 2>&1; fi
	for ((i = ${#PIDS[@]} - 1; i >= 0; i--)); do
		kill "${PIDS[i]}" 2>/dev/null
	done
	for pid in "${PIDS[@]}"; do
		for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$pid" 2>/dev/null
	done
	if [ "${KEEP:-0}" = 1 ]; then say "state kept in $T"; else rm -rf "$T"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mkdir -p "$T/munge" "$T/state" "$T/spool" "$T/log"
chmod 711 "$T/munge"
dd if=/dev/urandom of="$T/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$T/munge/munge.key"
MUNGE_SOCK=$T/munge/munge.sock
munged --foreground --force --key-file="$T/munge/munge.key" --socket="$MUNGE_SOCK" \
	--pid-file="$T/munge/munged.pid" --log-file="$T/log/munged.log" --seed-file="$T/munge/seed" >"$T/log/munged.out" 2>&1 &
PIDS+=($!)
for _ in $(seq 50); do [ -S "$MUNGE_SOCK" ] && break; sleep 0.1; done
munge --socket="$MUNGE_SOCK" -n | unmunge --socket="$MUNGE_SOCK" >/dev/null || die "munged does not answer (log: $(tail -3 "$T/log/munged.log"))"

# --- slurm.conf ---------------------------------------------------------------
free_port() {
	local p
	for _ in $(seq 100); do
		p=$((20000 + RANDOM % 30000))
		(exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
	done
	die "no free port"
}
CTLD_PORT=$(free_port)
SLURMD_PORT=$(free_port)
[ "$CTLD_PORT" != "$SLURMD_PORT" ] || SLURMD_PORT=$((CTLD_PORT + 1))
HOST=$(hostname -s)
export SLURM_CONF=$T/slurm.conf
cat >"$SLURM_CONF" <<EOF
# one-host test cluster of ptsghmc's cluster-test (state in $T)
ClusterName=ptsghmc-test
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$MUNGE_SOCK
CredType=cred/munge
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool/%n
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/log/slurmctld.log
SlurmdLogFile=$T/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
KillWait=30
MinJobAge=3600
NodeName=ptsghmc-node NodeHostname=$HOST NodeAddr=127.0.0.1 CPUs=2 RealMemory=4000 State=UNKNOWN
PartitionName=test Nodes=ptsghmc-node Default=YES MaxTime=INFINITE State=UP
EOF

slurmctld -D -i -f "$SLURM_CONF" >"$T/log/slurmctld.out" 2>&1 &
PIDS+=($!)
slurmd -D -N ptsghmc-node -f "$SLURM_CONF" >"$T/log/slurmd.out" 2>&1 &
PIDS+=($!)
say "slurmctld (pid ${PIDS[1]}, port $CTLD_PORT), slurmd (pid ${PIDS[2]}, port $SLURMD_PORT), munged (pid ${PIDS[0]}) started in $T"
for _ in $(seq 60); do
	state=$(sinfo -h -N -o %t 2>/dev/null | head -1)
	[ "$state" = idle ] && break
	sleep 1
done
[ "$state" = idle ] || die "node not idle (state '$state'); slurmctld log: $(tail -5 "$T/log/slurmctld.log"); slurmd log: $(tail -5 "$T/log/slurmd.log")"
sinfo

# --- the array job ------------------------------------------------------------
ARRAY=$T/run-array
"$BIN" slurm --out "$ARRAY" --chains $CHAINS "${TRAIN[@]}" --binary "$BIN" --cpus-per-task 1 --mem 1000M \
	--time 30:00 --signal-lead 60 --max-parallel 2 --script "$T/job.sbatch" || die "ptsghmc slurm failed"
JOB=$(sbatch --parsable "$T/job.sbatch") || die "sbatch failed"
JOB=${JOB%%;*}
say "submitted array job $JOB (tasks 1-$CHAINS, 2 at a time)"

# requeue task REQUEUE_TASK in the middle of its run
metrics=$ARRAY/chain-$REQUEUE_TASK/metrics.jsonl
lastStep() { tail -n 1 "$1" 2>/dev/null | sed -n 's/^{"step":\([0-9]*\),.*/\1/p'; }
for _ in $(seq 1200); do
	s=$(lastStep "$metrics")
	[ -n "$s" ] && [ "$s" -ge $((STEPS / 3)) ] && break
	sleep 0.25
done
[ -n "$s" ] && [ "$s" -ge $((STEPS / 3)) ] || die "task $REQUEUE_TASK did not get to step $((STEPS / 3)) (log: $(tail -5 "$ARRAY/logs/chain-$REQUEUE_TASK.out" 2>/dev/null))"
say "task $REQUEUE_TASK is at step $s of $STEPS: scontrol requeue ${JOB}_$REQUEUE_TASK"
scontrol requeue "${JOB}_$REQUEUE_TASK" || die "scontrol requeue failed"

# pool while running
sleep 2
say "eval while the array runs:"
"$BIN" eval --run "$ARRAY" || die "eval while running failed"

# task LIMIT_TASK near its time limit: once it runs (its signal handler is
# in place when it prints "starting"), cut its limit to 1 minute, so that
# --signal=TERM@60 fires at slurmctld's next time-limit check (every 30 s);
# it checkpoints, exits 75 and the job script requeues it. Its limit goes
# back to 30 minutes once it has. Should the timer not have fired by two
# thirds of the run (a fast machine), scancel --signal=TERM sends the same
# SIGTERM to the task's step that --signal would.
limitlog=$ARRAY/logs/chain-$LIMIT_TASK.out
for _ in $(seq 2400); do
	grep -q "starting" "$limitlog" 2>/dev/null && break
	sleep 0.25
done
grep -q "starting" "$limitlog" 2>/dev/null || die "task $LIMIT_TASK did not start"
say "task $LIMIT_TASK started: scontrol update JobId=${JOB}_$LIMIT_TASK TimeLimit=1 (its --signal=TERM@60 fires next)"
scontrol update JobId="${JOB}_$LIMIT_TASK" TimeLimit=1 || die "scontrol update TimeLimit failed"
limitReset=""
fallback=""

# wait for the array (a requeued job may wait for its begin time: start it now)
for i in $(seq 900); do
	if [ -z "$limitReset" ] && grep -q "exit code 75" "$limitlog" 2>/dev/null; then
		for _ in $(seq 60); do # until the script has requeued it
			scontrol update JobId="${JOB}_$LIMIT_TASK" TimeLimit=30 2>/dev/null && break
			sleep 0.5
		done
		limitReset=1
		say "task $LIMIT_TASK exited 75 before its time limit; limit back to 30 minutes"
	fi
	if [ -z "$limitReset" ] && [ -z "$fallback" ]; then
		s3=$(lastStep "$ARRAY/chain-$LIMIT_TASK/metrics.jsonl")
		if [ -n "$s3" ] && [ "$s3" -ge $((2 * STEPS / 3)) ]; then
			fallback=1
			say "the --signal timer has not fired by step $s3: scancel --signal=TERM ${JOB}_$LIMIT_TASK (the SIGTERM --signal sends)"
			scancel --signal=TERM "${JOB}_$LIMIT_TASK"
		fi
	fi
	left=$(squeue -h -r -j "$JOB" -o "%i %T %r" 2>/dev/null)
	[ -z "$left" ] && break
	if echo "$left" | grep -q BeginTime; then
		for id in $(echo "$left" | awk '$3 == "BeginTime" {print $1}'); do scontrol update JobId="$id" StartTime=now >/dev/null 2>&1; done
	fi
	[ $((i % 30)) = 0 ] && say "waiting: $(echo "$left" | tr '\n' ';')"
	sleep 1
done
[ -z "$left" ] || die "array job not done after 15 minutes: $left"
for i in $(seq 1 $CHAINS); do
	st=$(scontrol show job "${JOB}_$i" 2>/dev/null | tr ' ' '\n' | grep -E '^(JobState|ExitCode|Restarts)=' | tr '\n' ' ')
	say "task $i: $st"
	echo "$st" | grep -q 'JobState=COMPLETED' || die "task $i did not complete: $st; log: $(tail -5 "$ARRAY/logs/chain-$i.out")"
done
log=$ARRAY/logs/chain-$REQUEUE_TASK.out
grep -q "interrupted at step" "$log" || die "task $REQUEUE_TASK's log shows no interruption:
$(cat "$log")"
at=$(sed -n 's/.*resuming from its checkpoint at step \([0-9]*\).*/\1/p' "$log" | head -1)
[ -n "$at" ] && [ "$at" -gt 0 ] && [ "$at" -lt $STEPS ] || die "task $REQUEUE_TASK did not resume mid-run:
$(cat "$log")"
say "task $REQUEUE_TASK's log:"
sed 's/^/    /' "$log"
grep -q "task 0: Exited with exit code 75" "$limitlog" || die "task $LIMIT_TASK did not exit 75 on --signal:
$(cat "$limitlog")"
at3=$(sed -n 's/.*resuming from its checkpoint at step \([0-9]*\).*/\1/p' "$limitlog" | head -1)
[ -n "$at3" ] && [ "$at3" -gt 0 ] && [ "$at3" -lt $STEPS ] || die "task $LIMIT_TASK did not requeue itself and resume mid-run:
$(cat "$limitlog")"
say "task $LIMIT_TASK's log:"
sed 's/^/    /' "$limitlog"

# --- the same run in one process, and the comparison ------------------------------
say "the same run in one process (--chains $CHAINS):"
ONE=$T/run-one
"$BIN" train --out "$ONE" --chains $CHAINS "${TRAIN[@]}" --quiet || die "one-process run failed"
bad=0
for i in $(seq 1 $CHAINS); do
	for f in samples metrics.jsonl config.json; do
		if cmp "$ONE/chain-$i/$f" "$ARRAY/chain-$i/$f"; then
			say "chain $i $f: identical ($(stat -c %s "$ONE/chain-$i/$f") bytes)"
		else
			bad=1
		fi
	done
done
cmp "$ONE/config.json" "$ARRAY/config.json" || bad=1

say "eval --run of the array job's run:"
"$BIN" eval --run "$ARRAY" || die "eval failed"

if [ $bad = 0 ]; then
	say "PASS: $CHAINS array tasks (task $REQUEUE_TASK requeued by scontrol at step $s, resumed from its checkpoint at step $at; task $LIMIT_TASK signalled before its time limit, requeued itself, resumed at step $at3) wrote the same samples, metrics and configs as one process, byte for byte"
else
	die "some chain differs from the one-process run"
fi
