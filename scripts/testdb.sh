#!/usr/bin/env bash
# Throwaway PostgreSQL 15 cluster for Lethe's tests.
#
#   scripts/testdb.sh start   initdb (first time), make TLS certs, start, provision roles/db
#   scripts/testdb.sh stop    fast shutdown if running
#   scripts/testdb.sh status  exit 0 if running, non-zero otherwise
#   scripts/testdb.sh env     print `export` lines describing the cluster
#
# Layout under ${LETHE_TESTDB_DIR:-/tmp/lethe-testdb}:
#   data/   PGDATA            sock/  unix socket dir      log/postgres.log
#   tls/    ca.crt ca.key     server.crt/.key (PostgreSQL)    proxy.crt/.key (Lethe's
#           client-facing TLS), all signed by the same test CA; SANs localhost, 127.0.0.1, ::1
#
# Roles (password auth method chosen by pg_hba.conf, see write_hba):
#   lethe          SUPERUSER, 'lethe-test-pw', scram-sha-256
#   lethe_md5      'md5-pw', stored as md5, hba method md5
#   lethe_password 'plain-pw', hba method password (cleartext on the wire)
#   lethe_trust    no password, hba method trust
#
# Must run as root (or as the postgres OS user): PostgreSQL refuses to run as
# root, so server-side commands go through `runuser -u postgres`.
set -euo pipefail

PG_BIN=/usr/lib/postgresql/15/bin
BASE="${LETHE_TESTDB_DIR:-/tmp/lethe-testdb}"
PORT="${LETHE_TESTDB_PORT:-55432}"
PGDATA_DIR="$BASE/data"
SOCK_DIR="$BASE/sock"
LOG_DIR="$BASE/log"
TLS_DIR="$BASE/tls"
PG_USER=postgres

SUPER_USER=lethe
SUPER_PW=lethe-test-pw
TEST_DB=lethe_test

log() { printf '[testdb] %s\n' "$*" >&2; }
die() { printf '[testdb] ERROR: %s\n' "$*" >&2; exit 1; }

# Run a command as the postgres OS user (directly if we already are it).
as_pg() {
    if [[ $(id -un) == "$PG_USER" ]]; then
        "$@"
    else
        runuser -u "$PG_USER" -- "$@"
    fi
}

need_priv() {
    [[ $(id -u) -eq 0 || $(id -un) == "$PG_USER" ]] || die "run as root (or as $PG_USER)"
    [[ -x $PG_BIN/pg_ctl ]] || die "$PG_BIN/pg_ctl missing: run scripts/setup.sh"
}

is_running() {
    [[ -f $PGDATA_DIR/PG_VERSION ]] || return 1
    as_pg "$PG_BIN/pg_ctl" -D "$PGDATA_DIR" status >/dev/null 2>&1
}

stop_server() { as_pg "$PG_BIN/pg_ctl" -D "$PGDATA_DIR" -m fast -w -t 60 stop >/dev/null; }

# binary_replaced: the running postmaster's executable was deleted or
# replaced on disk since it started (a package upgrade).
binary_replaced() {
    local pid
    pid=$(head -1 "$PGDATA_DIR/postmaster.pid" 2>/dev/null) || return 1
    [[ $(readlink "/proc/$pid/exe" 2>/dev/null) == *" (deleted)" ]]
}

# psql as the bootstrap superuser over the unix socket (local trust).
psql_admin() {
    # client_min_messages: hide "already exists, skipping" notices on re-runs.
    PGOPTIONS="-c client_min_messages=warning" as_pg "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$SOCK_DIR" -p "$PORT" -U "$PG_USER" "$@"
}

# --- TLS ----------------------------------------------------------------------

# Sign a leaf cert ($1 = basename under $TLS_DIR) with the test CA.
make_leaf() {
    local name=$1 cn=$2
    local ext="$TLS_DIR/$name.ext"
    cat >"$ext" <<EOF
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth
subjectAltName = DNS:localhost, IP:127.0.0.1, IP:::1
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid, issuer
EOF
    openssl req -new -newkey rsa:2048 -nodes -subj "/CN=$cn" \
        -keyout "$TLS_DIR/$name.key" -out "$TLS_DIR/$name.csr" 2>/dev/null
    openssl x509 -req -in "$TLS_DIR/$name.csr" -CA "$TLS_DIR/ca.crt" -CAkey "$TLS_DIR/ca.key" \
        -set_serial "0x$(openssl rand -hex 16)" -days 3650 -sha256 \
        -extfile "$ext" -out "$TLS_DIR/$name.crt" 2>/dev/null
    rm -f "$TLS_DIR/$name.csr" "$ext"
}

# Create whatever is missing (or about to expire). A new CA invalidates all leaves.
ensure_tls() {
    mkdir -p "$TLS_DIR"
    local fresh_ca=0
    if [[ ! -s $TLS_DIR/ca.crt || ! -s $TLS_DIR/ca.key ]] ||
        ! openssl x509 -checkend 86400 -noout -in "$TLS_DIR/ca.crt" >/dev/null 2>&1; then
        log "generating test CA in $TLS_DIR"
        openssl req -x509 -new -newkey rsa:2048 -nodes -sha256 -days 3650 \
            -subj "/CN=Lethe Test CA" \
            -addext "basicConstraints=critical,CA:TRUE" \
            -addext "keyUsage=critical,keyCertSign,cRLSign" \
            -keyout "$TLS_DIR/ca.key" -out "$TLS_DIR/ca.crt" 2>/dev/null
        fresh_ca=1
    fi
    local leaf
    for leaf in server proxy; do
        if [[ $fresh_ca -eq 1 || ! -s $TLS_DIR/$leaf.crt || ! -s $TLS_DIR/$leaf.key ]] ||
            ! openssl x509 -checkend 86400 -noout -in "$TLS_DIR/$leaf.crt" >/dev/null 2>&1; then
            log "generating $leaf certificate"
            make_leaf "$leaf" localhost
        fi
    done
    # PostgreSQL insists its key is owned by it (or root) and not group/world
    # readable. Root-run tests (the proxy) can read everything regardless.
    chown -R "$PG_USER:$PG_USER" "$TLS_DIR"
    chmod 0755 "$TLS_DIR"
    chmod 0644 "$TLS_DIR"/*.crt
    chmod 0600 "$TLS_DIR"/*.key
}

# --- cluster config -----------------------------------------------------------

write_conf() {
    # Our settings live in a separate file included from postgresql.conf, so it
    # can be rewritten on each start without touching initdb's file.
    cat >"$PGDATA_DIR/lethe-test.conf" <<EOF
# Written by scripts/testdb.sh on every start; edit the script, not this file.
listen_addresses = '127.0.0.1'
port = $PORT
unix_socket_directories = '$SOCK_DIR'
unix_socket_permissions = 0777
max_connections = 100
shared_buffers = 32MB
password_encryption = 'scram-sha-256'
ssl = on
ssl_cert_file = '$TLS_DIR/server.crt'
ssl_key_file = '$TLS_DIR/server.key'
# Durability is irrelevant for a throwaway test cluster; speed is not.
fsync = off
synchronous_commit = off
full_page_writes = off
logging_collector = off
log_line_prefix = '%m [%p] %q%u@%d '
log_connections = on
log_disconnections = on
# Lethe's WAL follower reads committed rows by logical replication; tests
# make a slot and a publication each.
wal_level = logical
max_replication_slots = 64
max_wal_senders = 64
# A slot left by a test that was killed keeps WAL until dropped; past this
# the server invalidates it instead of filling the disk.
max_slot_wal_keep_size = 2GB
EOF
    if ! grep -q "^include_if_exists = 'lethe-test.conf'" "$PGDATA_DIR/postgresql.conf"; then
        printf "\ninclude_if_exists = 'lethe-test.conf'\n" >>"$PGDATA_DIR/postgresql.conf"
    fi
    chown "$PG_USER:$PG_USER" "$PGDATA_DIR/lethe-test.conf"
}

write_hba() {
    # First match wins: the per-role lines must precede the catch-all scram line.
    local f="$PGDATA_DIR/pg_hba.conf"
    {
        echo "# Written by scripts/testdb.sh on every start."
        echo "# TYPE  DATABASE  USER            ADDRESS        METHOD"
        echo "local   all       all                            trust"
        local addr
        for addr in 127.0.0.1/32 ::1/128; do
            echo "host    all       lethe_md5       $addr  md5"
            echo "host    all       lethe_password  $addr  password"
            echo "host    all       lethe_trust     $addr  trust"
            echo "host    all       all             $addr  scram-sha-256"
        done
    } >"$f"
    chown "$PG_USER:$PG_USER" "$f"
    chmod 0600 "$f"
}

provision() {
    # Idempotent: roles are created if missing and passwords always (re)set, so
    # the cluster converges to the documented state on every start.
    psql_admin -d postgres <<'EOF'
SELECT format('CREATE ROLE %I LOGIN', r)
  FROM unnest(ARRAY['lethe', 'lethe_md5', 'lethe_password', 'lethe_trust']) AS r
 WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = r) \gexec
SET password_encryption = 'scram-sha-256';
ALTER ROLE lethe SUPERUSER LOGIN PASSWORD 'lethe-test-pw';
ALTER ROLE lethe_password LOGIN PASSWORD 'plain-pw';
ALTER ROLE lethe_trust LOGIN PASSWORD NULL;
SET password_encryption = 'md5';
ALTER ROLE lethe_md5 LOGIN PASSWORD 'md5-pw';
RESET password_encryption;
SELECT 'CREATE DATABASE lethe_test OWNER lethe ENCODING ''UTF8'' TEMPLATE template0'
 WHERE NOT EXISTS (SELECT 1 FROM pg_database WHERE datname = 'lethe_test') \gexec
GRANT ALL ON DATABASE lethe_test TO lethe_md5, lethe_password, lethe_trust;
EOF
    psql_admin -d "$TEST_DB" <<'EOF'
CREATE EXTENSION IF NOT EXISTS vector;
GRANT ALL ON SCHEMA public TO lethe_md5, lethe_password, lethe_trust;
EOF
}

# --- commands -----------------------------------------------------------------

cmd_start() {
    need_priv
    mkdir -p "$BASE"
    chown "$PG_USER:$PG_USER" "$BASE"
    # Serialise concurrent starts (e.g. parallel test packages).
    exec 9>"$BASE/.lock"
    flock 9

    if is_running && [[ $(psql_admin -d postgres -tAc 'SHOW wal_level') != logical ]]; then
        log "restarting: the cluster predates wal_level = logical"
        write_conf
        stop_server
    fi
    if is_running && binary_replaced; then
        # A package upgrade replaced the server's files under it: the old
        # server would load the new version's libraries (plpgsql) and fail.
        log "restarting: PostgreSQL was upgraded while the cluster ran"
        stop_server
    fi
    if is_running; then
        log "already running (port $PORT, data $PGDATA_DIR)"
        write_conf # settings this script gained since the cluster started
        as_pg "$PG_BIN/pg_ctl" -D "$PGDATA_DIR" reload >/dev/null
        provision # cheap; heals a previous start interrupted before provisioning
        return 0
    fi

    mkdir -p "$SOCK_DIR" "$LOG_DIR"
    chown "$PG_USER:$PG_USER" "$SOCK_DIR" "$LOG_DIR"
    chmod 0755 "$SOCK_DIR" "$LOG_DIR"

    if [[ ! -f $PGDATA_DIR/PG_VERSION ]]; then
        log "initdb $PGDATA_DIR"
        rm -rf "$PGDATA_DIR"
        mkdir -p "$PGDATA_DIR"
        chown "$PG_USER:$PG_USER" "$PGDATA_DIR"
        chmod 0700 "$PGDATA_DIR"
        as_pg "$PG_BIN/initdb" -D "$PGDATA_DIR" -U "$PG_USER" \
            --auth-local=trust --auth-host=scram-sha-256 \
            --encoding=UTF8 --locale=C.UTF-8 --no-instructions >"$LOG_DIR/initdb.log" 2>&1 ||
            { cat "$LOG_DIR/initdb.log" >&2; die "initdb failed"; }
    fi

    ensure_tls
    write_conf
    write_hba

    log "starting on 127.0.0.1:$PORT (log $LOG_DIR/postgres.log)"
    # The port lies in Linux's ephemeral range, so a client connection of
    # this machine may hold it as its local port for a moment: a start that
    # finds it in use is tried again for a while.
    local attempt logged
    for attempt in 1 2 3 4 5 6 7 8 9 10; do
        logged=$(wc -c <"$LOG_DIR/postgres.log" 2>/dev/null || echo 0)
        # 9>&- : the postmaster must not inherit (and so hold forever) the start lock.
        if as_pg "$PG_BIN/pg_ctl" -D "$PGDATA_DIR" -l "$LOG_DIR/postgres.log" -w -t 60 start >/dev/null 9>&-; then
            break
        fi
        if ((attempt < 10)) && tail -c +"$((logged + 1))" "$LOG_DIR/postgres.log" | grep -q 'Address already in use'; then
            log "port $PORT is in use (a client's local port?): trying again in 2s"
            sleep 2
            continue
        fi
        tail -n 30 "$LOG_DIR/postgres.log" >&2 || true
        die "pg_ctl start failed"
    done
    provision
    log "ready"
}

cmd_stop() {
    need_priv
    if is_running; then
        log "stopping"
        stop_server
    else
        log "not running"
    fi
}

cmd_status() {
    need_priv
    if is_running; then
        log "running (port $PORT, data $PGDATA_DIR)"
        return 0
    fi
    log "not running"
    return 1
}

cmd_env() {
    local kv k v
    for kv in \
        "LETHE_TEST_PG_HOST=127.0.0.1" \
        "LETHE_TEST_PG_PORT=$PORT" \
        "LETHE_TEST_PG_USER=$SUPER_USER" \
        "LETHE_TEST_PG_PASSWORD=$SUPER_PW" \
        "LETHE_TEST_PG_DB=$TEST_DB" \
        "LETHE_TEST_PG_SOCKET_DIR=$SOCK_DIR" \
        "LETHE_TEST_PG_DATA=$PGDATA_DIR" \
        "LETHE_TEST_PG_BIN=$PG_BIN" \
        "LETHE_TEST_TLS_DIR=$TLS_DIR"; do
        k=${kv%%=*}
        v=${kv#*=}
        printf 'export %s=%q\n' "$k" "$v"
    done
}

case "${1:-}" in
start) cmd_start ;;
stop) cmd_stop ;;
status) cmd_status ;;
env) cmd_env ;;
*)
    echo "usage: $0 {start|stop|status|env}" >&2
    exit 2
    ;;
esac
