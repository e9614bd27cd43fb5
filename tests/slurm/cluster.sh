# A real Slurm cluster on this host, for the tests in this folder.
# Source it after tests/lib.sh:
#
#   . "$MAYA_TOP/tests/slurm/cluster.sh"
#   cluster_start 2          # munged, slurmctld and 2 slurmd nodes (n1, n2)
#   srun -N2 hostname        # clients find the cluster through SLURM_CONF
#
# Everything lives under $TEST_TMP/slurm: its own munge key and socket, state,
# spool, logs, pid files, ports and first job id chosen at random, so that
# several test runs on one machine do not meet (job ids name trace folders
# and choose MASTER_PORT). The maya plugin is in its plugstack.conf,
# pointing at the build tree as its install prefix. Every daemon is stopped by
# its recorded pid when the test ends, pass or fail (an EXIT trap), and any
# slurmstepd left behind is found by the SLURM_CONF path in its environment,
# which is unique to this cluster.
#
# Works as root on a machine where scripts/deps.sh has just installed
# slurm-wlm and munge (no daemon running, nothing configured).

SLURM_DIR=$TEST_TMP/slurm
export SLURM_CONF=$SLURM_DIR/slurm.conf
# Where jobs run: a directory every user may write (jobs of the unprivileged
# test user run there too). Reports appear here next to slurm-<jobid>.out.
JOBS_DIR=$TEST_TMP/jobs
# Trace storage root given to the plugin.
TRACE_ROOT=$TEST_TMP/traces
CLUSTER_NODES=0
# Extra plugin arguments for plugstack.conf (set before cluster_start), or
# the whole plugstack.conf line in CLUSTER_PLUGSTACK ("" for no plugin).
: "${MAYA_PLUGIN_ARGS:=}"

_cluster_pids=()

# An unused block of ports: slurmctld, then one per slurmd.
_cluster_ports() {
    local n=$1 base tries used
    for tries in 1 2 3 4 5 6 7 8 9 10; do
        # 30000..32760: clear of the plugin's MASTER_PORTs (10000..29999)
        # and of Linux's ephemeral ports (32768..)
        base=$((30000 + (RANDOM % 270) * 10))
        used=0
        for ((p = base; p <= base + n; p++)); do
            # /proc/net/tcp lists ports in hex, local address in column 2.
            if awk -v hp="$(printf ':%04X' "$p")" 'NR > 1 && substr($2, length($2) - 4) == hp { f = 1 } END { exit !f }' \
                /proc/net/tcp /proc/net/tcp6 2>/dev/null; then
                used=1
                break
            fi
        done
        [ $used = 0 ] && { echo "$base"; return 0; }
    done
    fail "no free block of ports for the test cluster"
}

_wait_for_file() {
    local f=$1 what=$2 i
    for ((i = 0; i < 200; i++)); do
        [ -s "$f" ] && return 0
        sleep 0.02
    done
    fail "$what did not start (no $f); log: $(tail -5 "$SLURM_DIR"/log/* 2>/dev/null)"
}

# The pid in a pid file, if that process is still the daemon we started.
_daemon_pid() {
    local f=$1 comm=$2 pid
    [ -s "$f" ] || return 1
    pid=$(cat "$f")
    [ -r "/proc/$pid/comm" ] && [ "$(cat "/proc/$pid/comm")" = "$comm" ] || return 1
    echo "$pid"
}

cluster_start() {
    local nodes=${1:-2} host port i
    CLUSTER_NODES=$nodes
    command -v slurmctld >/dev/null && command -v munged >/dev/null ||
        fail "slurm-wlm and munge are not installed (scripts/deps.sh installs them)"
    [ "$(id -u)" = 0 ] || fail "the Slurm tests start daemons and need root"
    trap cluster_stop EXIT
    # A test stopped by a signal (tests/run's timeout) exits, so that the
    # EXIT trap stops the daemons too.
    trap 'exit 143' TERM
    trap 'exit 130' INT
    trap 'exit 129' HUP
    # The daemons and other users must reach files under here.
    chmod 755 "$TEST_TMP"
    mkdir -p "$SLURM_DIR"/{log,state,spool,munge} "$TRACE_ROOT"
    chmod 1777 "$JOBS_DIR" 2>/dev/null || { mkdir -p "$JOBS_DIR"; chmod 1777 "$JOBS_DIR"; }
    # Users make their own folders under the trace root (maya-srun(1)).
    chmod 1777 "$TRACE_ROOT"

    # munge: its own key and socket, run as the munge user.
    dd if=/dev/urandom of="$SLURM_DIR/munge/munge.key" bs=1024 count=1 status=none
    chown -R munge:munge "$SLURM_DIR/munge"
    # munged wants its socket's folder reachable by everyone, writable by none.
    chmod 755 "$SLURM_DIR/munge"
    chmod 400 "$SLURM_DIR/munge/munge.key"
    runuser -u munge -- /usr/sbin/munged \
        --socket="$SLURM_DIR/munge/munge.socket" --key-file="$SLURM_DIR/munge/munge.key" \
        --pid-file="$SLURM_DIR/munge/munged.pid" --log-file="$SLURM_DIR/munge/munged.log" \
        --seed-file="$SLURM_DIR/munge/munged.seed" ||
        fail "munged did not start: $(cat "$SLURM_DIR/munge/munged.log" 2>/dev/null)"
    _wait_for_file "$SLURM_DIR/munge/munged.pid" munged

    for ((i = 1; i <= nodes; i++)); do mkdir -p "$SLURM_DIR/spool/n$i"; done
    port=$(_cluster_ports "$nodes")
    host=$(hostname)
    cat > "$SLURM_CONF" <<EOF
ClusterName=maya$$
FirstJobId=$((1000 + RANDOM * 30))
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$SLURM_DIR/munge/munge.socket
StateSaveLocation=$SLURM_DIR/state
SlurmdSpoolDir=$SLURM_DIR/spool/%n
SlurmctldPidFile=$SLURM_DIR/slurmctld.pid
SlurmdPidFile=$SLURM_DIR/slurmd-%n.pid
SlurmctldLogFile=$SLURM_DIR/log/slurmctld.log
SlurmdLogFile=$SLURM_DIR/log/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/affinity
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
MpiDefault=none
SwitchType=switch/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MailProg=/bin/true
ReturnToService=2
SchedulerType=sched/backfill
MinJobAge=300
KillWait=5
InactiveLimit=0
PlugStackConfig=$SLURM_DIR/plugstack.conf
NodeName=n[1-$nodes] NodeHostname=$host NodeAddr=127.0.0.1 Port=[$((port + 1))-$((port + nodes))] CPUs=2 Sockets=1 CoresPerSocket=2 ThreadsPerCore=1 RealMemory=1000 State=UNKNOWN
PartitionName=test Nodes=n[1-$nodes] Default=YES MaxTime=INFINITE State=UP
EOF
    echo "${CLUSTER_PLUGSTACK-required $MAYA_BUILD/lib/slurm/spank_maya.so prefix=$MAYA_BUILD trace_root=$TRACE_ROOT $MAYA_PLUGIN_ARGS}" \
        > "$SLURM_DIR/plugstack.conf"

    slurmctld -c -f "$SLURM_CONF" || fail "slurmctld did not start: $(tail -5 "$SLURM_DIR/log/slurmctld.log")"
    _wait_for_file "$SLURM_DIR/slurmctld.pid" slurmctld
    for ((i = 1; i <= nodes; i++)); do
        slurmd -f "$SLURM_CONF" -N "n$i" || fail "slurmd n$i did not start: $(tail -5 "$SLURM_DIR/log/slurmd-n$i.log")"
    done
    for ((i = 1; i <= nodes; i++)); do
        _wait_for_file "$SLURM_DIR/slurmd-n$i.pid" "slurmd n$i"
    done
    cluster_wait_idle
}

# Wait until every node is idle (not allocated, completing or drained).
cluster_wait_idle() {
    local i states
    for ((i = 0; i < 500; i++)); do
        states=$(sinfo -h -N -o '%T' 2>/dev/null | sort | uniq -c | tr -s ' ')
        [ "$states" = " $CLUSTER_NODES idle" ] && return 0
        sleep 0.02
    done
    fail "nodes are not idle after 10 s: $(sinfo -N -o '%N %T %E' 2>&1)"
}

# The state of every node, one "name state" line each.
cluster_node_states() {
    sinfo -h -N -o '%N %T'
}

# Wait until a job has left the queue (ended and its epilog finished).
cluster_wait_job() {
    local job=$1 limit=${2:-60} i state
    for ((i = 0; i < limit * 20; i++)); do
        state=$(squeue -h -j "$job" -o '%T' 2>/dev/null)
        [ -z "$state" ] && return 0
        sleep 0.05
    done
    fail "job $job still $state after ${limit}s"
}

_stop_pids() {
    local sig=$1
    shift
    local p
    for p in "$@"; do kill "-$sig" "$p" 2>/dev/null; done
}

cluster_stop() {
    local pids=() p f i left comm
    # Jobs still running (a test that failed half-way) are cancelled first so
    # that their step daemons end with them.
    if [ -n "$(squeue -h -o %i 2>/dev/null)" ]; then
        scancel --quiet $(squeue -h -o %i 2>/dev/null) 2>/dev/null
        for ((i = 0; i < 100; i++)); do
            [ -z "$(squeue -h -o %i 2>/dev/null)" ] && break
            sleep 0.05
        done
    fi
    # Daemons, all at once (each takes a moment to exit on SIGTERM).
    for f in "$SLURM_DIR"/slurmd-n*.pid; do
        p=$(_daemon_pid "$f" slurmd) && pids+=("$p")
    done
    p=$(_daemon_pid "$SLURM_DIR/slurmctld.pid" slurmctld) && pids+=("$p")
    p=$(_daemon_pid "$SLURM_DIR/munge/munged.pid" munged) && pids+=("$p")
    # Step daemons of this cluster carry its SLURM_CONF in their environment.
    for f in /proc/[0-9]*/comm; do
        { read -r comm < "$f"; } 2>/dev/null || continue
        [ "$comm" = slurmstepd ] || continue
        p=${f#/proc/}
        p=${p%/comm}
        { tr '\0' '\n' < "/proc/$p/environ"; } 2>/dev/null | grep -qxF "SLURM_CONF=$SLURM_CONF" && pids+=("$p")
    done
    [ ${#pids[@]} = 0 ] || _stop_pids TERM "${pids[@]}"
    left=()
    for ((i = 0; i < 100; i++)); do
        left=()
        for p in "${pids[@]}"; do [ -d "/proc/$p" ] && left+=("$p"); done
        [ ${#left[@]} = 0 ] && break
        sleep 0.05
    done
    [ ${#left[@]} = 0 ] || _stop_pids KILL "${left[@]}"
    rm -rf "$TEST_TMP"
}
