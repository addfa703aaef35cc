# bench/lib.sh — the lifecycle that bench/small.sh, bench/ingest.sh and
# bench/pgbench.sh share: logging, the server connection, durability for the
# run and its restore, free ports, waiting for a child to listen, stopping
# children, the bench database, building binaries and the host part of
# meta.txt. Sourced, not run. The sourcing script sets BENCH_NAME (its log
# prefix) and REPO (the checkout) before sourcing, and WORK (its temp dir)
# before calling build_binaries.
# shellcheck shell=bash

log() { printf '[%s %s] %s\n' "$BENCH_NAME" "$(date +%H:%M:%S)" "$*" >&2; }
die() { printf '[%s] ERROR: %s\n' "$BENCH_NAME" "$*" >&2; exit 1; }

# connect_env APPNAME: takes the server and superuser from LETHE_TEST_PG_*
# (from scripts/testdb.sh env when unset), sets PG_HOST, PG_PORT, PG_USER
# and libpq's environment for psql, and refuses a server not on loopback:
# the benchmarks alter its settings.
connect_env() {
    if [[ -z ${LETHE_TEST_PG_PORT:-} ]]; then
        eval "$("$REPO/scripts/testdb.sh" env)"
    fi
    PG_HOST=${LETHE_TEST_PG_HOST:-127.0.0.1}
    PG_PORT=${LETHE_TEST_PG_PORT:?}
    PG_USER=${LETHE_TEST_PG_USER:?}
    export PGPASSWORD=${LETHE_TEST_PG_PASSWORD:?}
    export PGSSLMODE=disable PGCONNECT_TIMEOUT=10 PGAPPNAME=$1
    unset PGHOST PGPORT PGUSER PGDATABASE PGSERVICE PGOPTIONS
    case $PG_HOST in 127.* | localhost | ::1) ;; *) die "refusing non-loopback server $PG_HOST" ;; esac
}

require_bins() {
    local bin
    for bin in "$@"; do command -v "$bin" >/dev/null || die "$bin not found in PATH"; done
}

# psql as the superuser, direct to the server
psql_direct() { psql -X -q -At -v ON_ERROR_STOP=1 -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" "$@"; }

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# free_port prints a free port on 127.0.0.1 in 20000-39999.
free_port() {
    local p
    for _ in $(seq 50); do
        p=$((20000 + RANDOM % 20000))
        if port_free "$p"; then echo "$p"; return; fi
    done
    die "no free port found"
}

# wait_listening PID PORT NAME LOGFILE: waits up to 10s for PID to listen on
# 127.0.0.1:PORT; dies, showing the end of LOGFILE, if PID exits first.
wait_listening() {
    local pid=$1 port=$2 name=$3 logfile=$4
    for _ in $(seq 100); do
        kill -0 "$pid" 2>/dev/null || { tail -n 20 "$logfile" >&2 || true; die "$name exited during startup"; }
        (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
        sleep 0.1
    done
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null || die "$name did not listen on 127.0.0.1:$port within 10s"
}

# stop_pids TENTHS PID...: SIGTERM to every PID, then for each waits up to
# TENTHS tenths of a second before SIGKILL. Empty PIDs are skipped.
stop_pids() {
    local tenths=$1 pid
    shift
    for pid in "$@"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "$@"; do
        for _ in $(seq "$tenths"); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$pid" 2>/dev/null || true
    done
}

# The ledger fsyncs every write-ahead intent, as a production PostgreSQL
# fsyncs every commit. The test cluster runs with fsync=off: measured against
# it, the proxy pays for durability that the direct path skips, and its fsyncs
# queue behind the server's unsynced write-back on the shared disk.
# make_server_durable turns fsync and synchronous_commit on (ALTER SYSTEM,
# reload) and records in RESTORE_SQL and DURABILITY_WAS how to put them back;
# restore_server_durability (from the EXIT trap) does so.
RESTORE_SQL=() DURABILITY_WAS=""
make_server_durable() {
    local name setting source
    for name in fsync synchronous_commit; do
        IFS='|' read -r setting source < <(psql_direct -d postgres -F '|' -c "SELECT setting, source FROM pg_settings WHERE name = '$name'")
        case $source in
        "configuration file" | default) RESTORE_SQL+=("ALTER SYSTEM RESET $name") ;;
        *) RESTORE_SQL+=("ALTER SYSTEM SET $name = '$setting'") ;;
        esac
        DURABILITY_WAS+="$name=$setting "
        psql_direct -d postgres -c "ALTER SYSTEM SET $name = on"
    done
    psql_direct -d postgres -c "SELECT pg_reload_conf()" >/dev/null
    sleep 1
    log "server made durable for the run: fsync=$(psql_direct -d postgres -c 'SHOW fsync') synchronous_commit=$(psql_direct -d postgres -c 'SHOW synchronous_commit') (was: $DURABILITY_WAS)"
}

restore_server_durability() {
    if ((${#RESTORE_SQL[@]})); then
        local q args=()
        for q in "${RESTORE_SQL[@]}"; do args+=(-c "$q"); done
        psql_direct -d postgres "${args[@]}" -c "SELECT pg_reload_conf()" >/dev/null ||
            log "WARNING: could not restore the server's ${DURABILITY_WAS}; run: ${RESTORE_SQL[*]}"
    fi
}

# ensure_bench_db DB: checks the server answers and creates DB if missing.
ensure_bench_db() {
    psql_direct -d postgres -c 'select 1' >/dev/null || die "cannot reach PostgreSQL at $PG_HOST:$PG_PORT as $PG_USER (scripts/testdb.sh start?)"
    if [[ $(psql_direct -d postgres -c "select 1 from pg_database where datname = '$1'") != 1 ]]; then
        log "creating database $1"
        psql_direct -d postgres -c "create database \"$1\""
    fi
}

# build_binaries PKG...: builds each Go package of the checkout into
# $WORK/<its last path element>.
build_binaries() {
    local pkg
    (
        cd "$REPO" || exit 1
        for pkg in "$@"; do go build -o "$WORK/${pkg##*/}" "$pkg" || exit 1; done
    ) || die "go build failed"
}

# host_meta prints meta.txt's lines about the run's date, the checkout, the
# host and the server.
host_meta() {
    echo "date_utc=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "git_rev=$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)"
    echo "git_changes=$(git -C "$REPO" status --porcelain -- . ':!bench' 2>/dev/null | awk '{print $1 ":" $2}' | paste -sd' ')"
    echo "nproc=$(nproc)"
    echo "cpu_model=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)"
    echo "kernel=$(uname -r)"
    echo "postgres=$(psql_direct -d postgres -c 'show server_version')"
}
