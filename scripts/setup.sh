#!/usr/bin/env bash
# Prepare a fresh Debian 12 (bookworm) machine for Lethe's tests.
#
# Idempotent: every step checks first and does nothing when already done, so a
# re-run on a prepared machine takes about a second. Must run as root (it uses
# apt-get and installs into the system PostgreSQL tree).
#
# Steps:
#   1. Debian packages (PostgreSQL 15 server/client/dev headers, pgbouncer,
#      psycopg for Python-side tests, python3-cryptography for the spec-only
#      verifier (test/specverify), toolchain for building pgvector, openssl,
#      chromium for the browser verifier's headless tests).
#   2. pgvector for PostgreSQL 15, built from Debian trixie's *source* package
#      (bookworm ships no pgvector binary package).
#   3. npm dependencies of test/integration/node, if that directory exists.
#
# The test cluster itself is managed by scripts/testdb.sh, not here.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$SCRIPT_DIR/.." && pwd)"

PG_MAJOR=15
PG_BIN="/usr/lib/postgresql/$PG_MAJOR/bin"
PG_CONFIG="$PG_BIN/pg_config"
BUILD_DIR="${LETHE_BUILD_DIR:-/var/tmp/lethe-build}"
TRIXIE_SRC_FILE=/etc/apt/sources.list.d/lethe-trixie-src.sources

export DEBIAN_FRONTEND=noninteractive

log() { printf '[setup] %s\n' "$*" >&2; }
die() { printf '[setup] ERROR: %s\n' "$*" >&2; exit 1; }

[[ $(id -u) -eq 0 ]] || die "must run as root (apt-get, make install)"

# --- apt helpers --------------------------------------------------------------

APT_UPDATED=0
apt_update_once() {
    # Only refresh package lists when we actually have to install something.
    if [[ $APT_UPDATED -eq 0 ]]; then
        log "apt-get update"
        apt-get update -qq
        APT_UPDATED=1
    fi
}

is_installed() {
    [[ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null || true)" == installed ]]
}

# Package installs must not start services (e.g. the Debian 'main' cluster on
# 5432 or pgbouncer on 6432): our tests run their own cluster via testdb.sh.
# Containers usually already ship a policy-rc.d that denies starts; on a machine
# without one we add a temporary one for the duration of the install.
TEMP_POLICY=0
cleanup() {
    if [[ $TEMP_POLICY -eq 1 ]]; then rm -f /usr/sbin/policy-rc.d; fi
}
trap cleanup EXIT

apt_install() {
    if [[ ! -e /usr/sbin/policy-rc.d ]]; then
        printf '#!/bin/sh\n# temporary, added by lethe scripts/setup.sh\nexit 101\n' >/usr/sbin/policy-rc.d
        chmod 0755 /usr/sbin/policy-rc.d
        TEMP_POLICY=1
    fi
    apt_update_once
    log "apt-get install $*"
    apt-get install -y -qq --no-install-recommends "$@" >/dev/null
    if [[ $TEMP_POLICY -eq 1 ]]; then rm -f /usr/sbin/policy-rc.d; TEMP_POLICY=0; fi
}

have_pgvector() {
    [[ -f "/usr/share/postgresql/$PG_MAJOR/extension/vector.control" &&
       -f "/usr/lib/postgresql/$PG_MAJOR/lib/vector.so" ]]
}

# Write a deb822 'deb-src' entry for trixie, reusing the URIs and Signed-By of
# the machine's existing bookworm entry (so this script names no mirror host).
# Only source indexes are fetched for deb-src: apt can never install trixie
# binaries through it.
write_trixie_src() {
    local uris="" signed=""
    local f
    for f in /etc/apt/sources.list.d/*.sources; do
        [[ -e $f ]] || continue
        # Print "URIs|Signed-By" of the first stanza whose Suites has a bare
        # 'bookworm' (not bookworm-security, which lives on a different path).
        local found
        found="$(awk '
            function flush() {
                if (hasdeb && hasbw && uris != "" && !done) { print uris "|" signed; done = 1 }
                hasdeb = 0; hasbw = 0; uris = ""; signed = ""
            }
            /^[[:space:]]*$/ { flush(); next }
            /^[[:space:]]*#/ { next }
            tolower($1) == "types:" { for (i = 2; i <= NF; i++) if ($i == "deb") hasdeb = 1 }
            tolower($1) == "suites:" { for (i = 2; i <= NF; i++) if ($i == "bookworm") hasbw = 1 }
            tolower($1) == "uris:" { $1 = ""; sub(/^ +/, ""); uris = $0 }
            tolower($1) == "signed-by:" { $1 = ""; sub(/^ +/, ""); signed = $0 }
            END { flush() }
        ' "$f")"
        if [[ -n $found ]]; then
            uris="${found%%|*}"
            signed="${found#*|}"
            break
        fi
    done
    # Fallback: classic one-line format ("deb [opts] URI bookworm main ...").
    if [[ -z $uris && -r /etc/apt/sources.list ]]; then
        uris="$(awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i !~ /^\[/ && $i !~ /\]$/ && $i !~ /=/) { if ($(i+1) == "bookworm") print $i; break } }' \
            /etc/apt/sources.list | head -n1)"
    fi
    [[ -n $uris ]] || die "could not find the bookworm apt source to derive a trixie deb-src entry from"
    [[ -n $signed ]] || signed=/usr/share/keyrings/debian-archive-keyring.gpg

    log "adding trixie deb-src entry $TRIXIE_SRC_FILE"
    cat >"$TRIXIE_SRC_FILE" <<EOF
# Added by lethe scripts/setup.sh: source packages only (deb-src), used to
# build pgvector for PostgreSQL $PG_MAJOR, which bookworm does not package.
Types: deb-src
URIs: $uris
Suites: trixie
Components: main
Signed-By: $signed
EOF
}

# --- 1. Debian packages -------------------------------------------------------

PACKAGES=(
    "postgresql-$PG_MAJOR"            # server binaries used by testdb.sh
    "postgresql-server-dev-$PG_MAJOR" # pg_config + headers for building pgvector
    "postgresql-client-$PG_MAJOR"     # psql for test setup/verification
    build-essential                   # compiler/make for pgvector
    dpkg-dev                          # dpkg-source, needed by 'apt-get source'
    pgbouncer                         # comparison/compat tests
    python3-psycopg                   # Python client tests (use /usr/bin/python3)
    python3-cryptography              # Ed25519 for test/specverify/verify.py, the verifier written from the spec alone
    openssl                           # test CA / certificates in testdb.sh
    chromium                          # headless browser tests (certificate/webverify, admin/console, via chromedp)
    ca-certificates
)

# If pgvector must be built, add its deb-src entry now so that a single
# 'apt-get update' covers both the package installs and the source download.
if ! have_pgvector && [[ ! -f $TRIXIE_SRC_FILE ]]; then
    write_trixie_src
fi

missing=()
for p in "${PACKAGES[@]}"; do
    is_installed "$p" || missing+=("$p")
done
if [[ ${#missing[@]} -gt 0 ]]; then
    apt_install "${missing[@]}"
else
    log "Debian packages: all present"
fi

# --- 2. pgvector --------------------------------------------------------------

if have_pgvector; then
    log "pgvector: already installed ($(sed -n "s/^default_version *= *'\(.*\)'/\1/p" \
        "/usr/share/postgresql/$PG_MAJOR/extension/vector.control"))"
else
    if [[ ! -f $TRIXIE_SRC_FILE ]]; then
        write_trixie_src
        APT_UPDATED=0 # new source: its index must be fetched
    fi
    mkdir -p "$BUILD_DIR"
    # Reuse an already-extracted source tree from an interrupted earlier run.
    src_dir="$(find "$BUILD_DIR" -maxdepth 1 -type d -name 'pgvector-*' | sort -V | tail -n1)"
    if [[ -z $src_dir ]]; then
        apt_update_once
        log "apt-get source pgvector (trixie) into $BUILD_DIR"
        # Sandbox user root: the build dir is root-owned; avoids the _apt warning.
        (cd "$BUILD_DIR" && apt-get source -qq -o APT::Sandbox::User=root pgvector >/dev/null)
        src_dir="$(find "$BUILD_DIR" -maxdepth 1 -type d -name 'pgvector-*' | sort -V | tail -n1)"
        [[ -n $src_dir ]] || die "apt-get source pgvector produced no source tree in $BUILD_DIR"
    fi
    log "building $(basename "$src_dir") against $PG_CONFIG"
    # OPTFLAGS= : no -march=native, like Debian's own build (portable binary).
    make -s -C "$src_dir" PG_CONFIG="$PG_CONFIG" OPTFLAGS= >/dev/null
    make -s -C "$src_dir" PG_CONFIG="$PG_CONFIG" OPTFLAGS= install >/dev/null
    have_pgvector || die "pgvector install did not produce vector.control/vector.so"
    log "pgvector: installed $(basename "$src_dir")"
fi

# --- 3. node test dependencies ------------------------------------------------

NODE_DIR="$REPO_ROOT/test/integration/node"
if [[ -f "$NODE_DIR/package.json" ]]; then
    if ! command -v npm >/dev/null 2>&1; then
        # Debian's own node/npm; used only when the machine has none.
        apt_install nodejs npm
    fi
    lock=""
    [[ -f "$NODE_DIR/package-lock.json" ]] && lock="$NODE_DIR/package-lock.json"
    if [[ ! -d "$NODE_DIR/node_modules" ||
          "$NODE_DIR/package.json" -nt "$NODE_DIR/node_modules" ||
          ( -n $lock && "$lock" -nt "$NODE_DIR/node_modules" ) ]]; then
        if [[ -n $lock ]]; then
            log "npm ci in $NODE_DIR"
            (cd "$NODE_DIR" && npm ci --no-audit --no-fund --loglevel=error)
        else
            log "npm install in $NODE_DIR (no lockfile)"
            (cd "$NODE_DIR" && npm install --no-audit --no-fund --loglevel=error)
        fi
        # npm may leave the directory's mtime untouched (or, with no deps, not
        # create it at all); mark it fresh so the check above is quiet next time.
        mkdir -p "$NODE_DIR/node_modules"
        touch "$NODE_DIR/node_modules"
    else
        log "node deps: up to date"
    fi
fi

log "done"
