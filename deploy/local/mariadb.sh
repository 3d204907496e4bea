#!/usr/bin/env bash
# deploy/local/mariadb.sh — install, start and stop a private MariaDB 11.8 for kgsearch.
#
# MariaDB 11.8 (vectors + HNSW) comes from Debian trixie packages, unpacked with
# `dpkg -x` into ${KGS_STATE}/mariadb/prefix together with the trixie libraries it
# needs; the binaries are patched (patchelf) to use that private glibc, so the
# system's packages, libc and apt state stay untouched. apt runs with a private
# configuration (its own sources.list, lists and cache under the state folder).
#
# Usage: deploy/local/mariadb.sh {install|start|stop|status|env|client}
#   install  download (cached) and unpack MariaDB into the prefix; idempotent
#   start    install if needed, initialise the data dir, start mariadbd, wait until
#            it answers SQL, create the databases and the kgsearch user; a running
#            server is left alone
#   stop     stop the server whose pid is in the pid file and wait for it to exit
#   status   print "running (pid N, version V)" or "stopped"; exit 0 / 3
#   env      print `export KGS_MARIADB_DSN=...` and `export KGS_TEST_MARIADB_DSN=...`
#   client   open the mariadb client as root on the private socket (extra args passed on)
#
# Environment (defaults in brackets):
#   KGS_STATE               state folder [<repo>/.state]
#   KGS_MARIADB_PORT        TCP port on 127.0.0.1 [13306]
#   KGS_MARIADB_PASSWORD    password of user kgsearch [kgsearch]
#   KGS_MARIADB_BUFFER_POOL innodb_buffer_pool_size [256M]
#   KGS_MARIADB_MHNSW_CACHE mhnsw_max_cache_size, HNSW graph cache per table [512M]
#   KGS_MARIADB_TIMEOUT     seconds to wait for readiness / shutdown [90]
#   KGS_DEBIAN_MIRROR       Debian mirror [http://deb.debian.org/debian]
#
# Accounts: root@localhost has no password and is reachable only through the private
# unix socket or 127.0.0.1 (the server listens on loopback only). The application user
# kgsearch@127.0.0.1 / kgsearch@localhost has ALL on `kgsearch` and on every database
# matching `kgsearch_test%` (tests create and drop kgsearch_test_<random>).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
STATE="${KGS_STATE:-$REPO/.state}"
BASE="$STATE/mariadb"
PREFIX="$BASE/prefix"
APTDIR="$BASE/apt"
DEBS="$BASE/debs"
DATADIR="$BASE/data"
RUNDIR="$BASE/run"
SOCKET="$RUNDIR/mariadb.sock"
PIDFILE="$RUNDIR/mariadbd.pid"
LOGFILE="$BASE/mariadbd.log"
INSTALL_LOG="$BASE/install.log"
PORT="${KGS_MARIADB_PORT:-13306}"
PASSWORD="${KGS_MARIADB_PASSWORD:-kgsearch}"
BUFFER_POOL="${KGS_MARIADB_BUFFER_POOL:-256M}"
MHNSW_CACHE="${KGS_MARIADB_MHNSW_CACHE:-512M}"
TIMEOUT="${KGS_MARIADB_TIMEOUT:-90}"
MIRROR="${KGS_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
SUITE="trixie"
ARCH="amd64"
LIBDIR="$PREFIX/usr/lib/x86_64-linux-gnu"
LOADER="$LIBDIR/ld-linux-x86-64.so.2"
# Bump when the package list or the patching changes: a prefix with another stamp is rebuilt.
RECIPE="4"
STAMP="$PREFIX/.kgs-installed"

# Packages unpacked into the prefix: MariaDB itself plus every shared library that
# mariadbd / mariadb / my_print_defaults / resolveip load, directly or indirectly
# (checked with the private loader's --list after unpacking; install fails naming any
# library that is missing or would come from the system). liblzma5, liblz4-1 and
# libgcrypt20/libgpg-error0 are libraries libsystemd0 may dlopen.
PACKAGES=(
  mariadb-server-core mariadb-client-core mariadb-common mysql-common
  libc6 libstdc++6 libgcc-s1 libssl3t64 libpcre2-8-0 liburing2 libaio1t64 libnuma1
  libsystemd0 libcrypt1 zlib1g libzstd1 libcap2
  libedit2 libncurses6 libtinfo6 libbsd0 libmd0
  liblzma5 liblz4-1 libgcrypt20 libgpg-error0
)
# Binaries we execute: each gets the private loader and rpath.
BINARIES=(
  usr/sbin/mariadbd usr/bin/mariadb usr/bin/my_print_defaults usr/bin/resolveip
)

die() { echo "mariadb.sh: $*" >&2; exit 1; }
log() { echo "mariadb.sh: $*" >&2; }

apt_private() {
  apt-get \
    -o Dir::Etc::sourcelist="$APTDIR/sources.list" \
    -o Dir::Etc::sourceparts="$APTDIR/empty.d" \
    -o Dir::Etc::preferences=/dev/null \
    -o Dir::Etc::preferencesparts="$APTDIR/empty.d" \
    -o APT::Sandbox::User=root \
    -o Dir::State="$APTDIR/state" \
    -o Dir::State::status="$APTDIR/state/status" \
    -o Dir::Cache="$APTDIR/cache" \
    -o APT::Architecture="$ARCH" \
    -o APT::Architectures::="$ARCH" \
    -o APT::Get::List-Cleanup=0 \
    -o Acquire::Languages=none \
    -o Debug::NoLocking=1 \
    "$@"
}

# trixie_keyring prints a keyring file that holds the trixie archive keys.
trixie_keyring() {
  local sys=/usr/share/keyrings/debian-archive-keyring.gpg
  if [[ -r /usr/share/keyrings/debian-archive-trixie-automatic.gpg && -r $sys ]]; then
    echo "$sys"; return
  fi
  # Older keyring without trixie: take debian-archive-keyring from trixie itself,
  # fetched through the system apt (bookworm-signed) sources into our cache.
  local own="$APTDIR/keyring/usr/share/keyrings/debian-archive-keyring.gpg"
  if [[ ! -r $own ]]; then
    mkdir -p "$APTDIR/keyring-deb"
    log "system keyring lacks trixie keys; fetching debian-archive-keyring"
    (cd "$APTDIR/keyring-deb" && apt-get download debian-archive-keyring) >>"$INSTALL_LOG" 2>&1 \
      || die "cannot download debian-archive-keyring (see $INSTALL_LOG)"
    dpkg -x "$APTDIR"/keyring-deb/debian-archive-keyring_*.deb "$APTDIR/keyring"
  fi
  echo "$own"
}

ensure_patchelf() {
  command -v patchelf >/dev/null 2>&1 && return
  log "installing patchelf (apt-get install -y patchelf)"
  local sudo=""
  [[ $(id -u) -eq 0 ]] || sudo="sudo"
  if ! $sudo apt-get install -y patchelf >>"$INSTALL_LOG" 2>&1; then
    $sudo apt-get update >>"$INSTALL_LOG" 2>&1 || true
    $sudo apt-get install -y patchelf >>"$INSTALL_LOG" 2>&1 || die "cannot install patchelf (see $INSTALL_LOG)"
  fi
}

download_debs() {
  mkdir -p "$APTDIR/state/lists/partial" "$APTDIR/cache/archives/partial" "$APTDIR/empty.d" "$DEBS"
  : >"$APTDIR/state/status.tmp"; [[ -e $APTDIR/state/status ]] || mv "$APTDIR/state/status.tmp" "$APTDIR/state/status"
  rm -f "$APTDIR/state/status.tmp"
  local keyring missing=() p
  for p in "${PACKAGES[@]}"; do
    compgen -G "$DEBS/${p}_*_${ARCH}.deb" >/dev/null || compgen -G "$DEBS/${p}_*_all.deb" >/dev/null || missing+=("$p")
  done
  if ((${#missing[@]} == 0)); then
    log "all ${#PACKAGES[@]} packages cached in $DEBS"
    return
  fi
  keyring="$(trixie_keyring)"
  echo "deb [arch=$ARCH signed-by=$keyring] $MIRROR $SUITE main" >"$APTDIR/sources.list"
  log "apt-get update ($SUITE, private state in $APTDIR)"
  apt_private update >>"$INSTALL_LOG" 2>&1 || die "apt-get update for $SUITE failed (see $INSTALL_LOG)"
  log "downloading ${#missing[@]} packages: ${missing[*]}"
  (cd "$DEBS" && apt_private download "${missing[@]}") >>"$INSTALL_LOG" 2>&1 \
    || die "apt-get download failed (see $INSTALL_LOG)"
}

# check_libs fails naming any shared library a binary cannot find in the prefix.
check_libs() {
  local b out
  for b in "${BINARIES[@]}"; do
    out="$("$LOADER" --library-path "$LIBDIR" --list "$PREFIX/$b" 2>&1)" || die "ldd $b failed: $out"
    if grep -q "not found" <<<"$out"; then
      die "$b needs libraries missing from the prefix: $(grep 'not found' <<<"$out" | awk '{print $1}' | tr '\n' ' ')"
    fi
    if grep -Eq '=> /(usr/)?lib' <<<"$out"; then
      die "$b would load system libraries: $(grep -E '=> /(usr/)?lib' <<<"$out" | tr '\n' ' ')"
    fi
  done
}

cmd_install() {
  mkdir -p "$BASE"
  if [[ -f $STAMP && $(cat "$STAMP") == "$RECIPE" ]]; then
    return 0
  fi
  if [[ -d $PREFIX ]] && running_pid >/dev/null; then
    die "the installed MariaDB is outdated (recipe $RECIPE) but running; stop it first: $0 stop"
  fi
  local t0=$SECONDS
  : >"$INSTALL_LOG"
  ensure_patchelf
  download_debs
  log "unpacking into $PREFIX"
  rm -rf "$PREFIX.tmp"
  mkdir -p "$PREFIX.tmp"
  local p deb
  for p in "${PACKAGES[@]}"; do
    deb="$(compgen -G "$DEBS/${p}_*_${ARCH}.deb" || compgen -G "$DEBS/${p}_*_all.deb")" \
      || die "package $p missing from $DEBS"
    deb="$(printf '%s\n' "$deb" | sort -V | tail -n1)"
    dpkg -x "$deb" "$PREFIX.tmp"
  done
  # Debian's usrmerge layout: some libraries live in /lib; make them visible in /usr/lib.
  if [[ -d $PREFIX.tmp/lib/x86_64-linux-gnu ]]; then
    cp -a "$PREFIX.tmp/lib/x86_64-linux-gnu/." "$PREFIX.tmp/usr/lib/x86_64-linux-gnu/"
  fi
  mkdir -p "$PREFIX.tmp/usr/lib/mysql/plugin"
  rm -rf "$PREFIX"
  mv "$PREFIX.tmp" "$PREFIX"
  local b
  for b in "${BINARIES[@]}"; do
    [[ -f $PREFIX/$b ]] || die "binary $b not found in the unpacked packages"
    # DT_RPATH (--force-rpath), unlike DT_RUNPATH, also applies to the dependencies of
    # dependencies (libsystemd -> libcap, libedit -> libbsd), so no system library is
    # ever mixed with the private glibc.
    patchelf --set-interpreter "$LOADER" --force-rpath --set-rpath "$LIBDIR" "$PREFIX/$b"
  done
  check_libs
  "$PREFIX/usr/sbin/mariadbd" --version >/dev/null || die "patched mariadbd does not run"
  echo "$RECIPE" >"$STAMP"
  log "installed $("$PREFIX/usr/sbin/mariadbd" --version) in $((SECONDS - t0))s"
}

running_pid() {
  [[ -f $PIDFILE ]] || return 1
  local pid
  pid="$(tr -dc '0-9' <"$PIDFILE")"
  [[ -n $pid ]] || return 1
  kill -0 "$pid" 2>/dev/null || return 1
  # Make sure the pid is our mariadbd, not a recycled pid.
  [[ "$(readlink -f "/proc/$pid/exe" 2>/dev/null)" == "$(readlink -f "$PREFIX/usr/sbin/mariadbd")" ]] || return 1
  echo "$pid"
}

root_sql() {
  "$PREFIX/usr/bin/mariadb" --no-defaults --socket="$SOCKET" -uroot --batch --skip-column-names "$@"
}

ping_sql() {
  root_sql -e 'SELECT 1' >/dev/null 2>&1
}

shell_quote() { # single-quotes a value for POSIX shells
  printf "'%s'" "${1//\'/\'\\\'\'}"
}

sql_quote() { # escapes a value for a single-quoted SQL literal
  local s=${1//\\/\\\\}
  printf "%s" "${s//\'/\\\'}"
}

initdb() {
  [[ -d $DATADIR/mysql ]] && return 0
  log "initialising data directory $DATADIR"
  rm -rf "$DATADIR.tmp"
  mkdir -p "$DATADIR.tmp"
  local userarg=()
  [[ $(id -u) -eq 0 ]] && userarg=(--user=root)
  PATH="$PREFIX/usr/bin:$PREFIX/usr/sbin:$PATH" \
    "$PREFIX/usr/bin/mariadb-install-db" --no-defaults \
    --basedir="$PREFIX/usr" --datadir="$DATADIR.tmp" \
    --auth-root-authentication-method=normal --skip-test-db \
    --skip-name-resolve "${userarg[@]}" \
    >>"$BASE/install-db.log" 2>&1 || die "mariadb-install-db failed (see $BASE/install-db.log)"
  mv "$DATADIR.tmp" "$DATADIR"
}

setup_accounts() {
  local pw
  pw="$(sql_quote "$PASSWORD")"
  root_sql <<SQL || die "creating databases and user failed (see $LOGFILE)"
CREATE DATABASE IF NOT EXISTS kgsearch CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci;
CREATE DATABASE IF NOT EXISTS kgsearch_test CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci;
CREATE USER IF NOT EXISTS 'kgsearch'@'127.0.0.1' IDENTIFIED BY '$pw';
CREATE USER IF NOT EXISTS 'kgsearch'@'localhost' IDENTIFIED BY '$pw';
ALTER USER 'kgsearch'@'127.0.0.1' IDENTIFIED BY '$pw';
ALTER USER 'kgsearch'@'localhost' IDENTIFIED BY '$pw';
GRANT ALL PRIVILEGES ON \`kgsearch\`.* TO 'kgsearch'@'127.0.0.1', 'kgsearch'@'localhost';
GRANT ALL PRIVILEGES ON \`kgsearch_test%\`.* TO 'kgsearch'@'127.0.0.1', 'kgsearch'@'localhost';
SQL
}

cmd_start() {
  local pid
  if pid="$(running_pid)"; then
    log "already running (pid $pid, port $PORT)"
    return 0
  fi
  cmd_install
  mkdir -p "$RUNDIR"
  initdb
  rm -f "$PIDFILE"
  [[ -S $SOCKET ]] && rm -f "$SOCKET"
  local userarg=()
  [[ $(id -u) -eq 0 ]] && userarg=(--user=root)
  log "starting mariadbd on 127.0.0.1:$PORT (log $LOGFILE)"
  setsid "$PREFIX/usr/sbin/mariadbd" --no-defaults \
    --basedir="$PREFIX/usr" --datadir="$DATADIR" \
    --plugin-dir="$PREFIX/usr/lib/mysql/plugin" \
    --lc-messages-dir="$PREFIX/usr/share/mariadb" \
    --tmpdir="$RUNDIR" \
    --bind-address=127.0.0.1 --port="$PORT" --socket="$SOCKET" \
    --pid-file="$PIDFILE" --log-error="$LOGFILE" \
    --innodb-buffer-pool-size="$BUFFER_POOL" \
    --mhnsw-max-cache-size="$MHNSW_CACHE" \
    --skip-name-resolve \
    --character-set-server=utf8mb4 --collation-server=utf8mb4_unicode_ci \
    --max-connections=300 --max-allowed-packet=64M \
    "${userarg[@]}" </dev/null >>"$LOGFILE" 2>&1 &
  local child=$! deadline=$((SECONDS + TIMEOUT))
  until ping_sql; do
    if ! kill -0 "$child" 2>/dev/null; then
      tail -n 20 "$LOGFILE" >&2 || true
      die "mariadbd exited during start-up; see $LOGFILE"
    fi
    if ((SECONDS >= deadline)); then
      die "mariadbd not ready after ${TIMEOUT}s; see $LOGFILE (pid $child still running; stop it with: kill $child)"
    fi
    sleep 0.3
  done
  setup_accounts
  log "ready: $(root_sql -e 'SELECT VERSION()') pid $(running_pid || echo "$child") port $PORT"
}

cmd_stop() {
  local pid
  if ! pid="$(running_pid)"; then
    log "not running"
    rm -f "$PIDFILE"
    return 0
  fi
  log "stopping mariadbd (pid $pid)"
  kill -TERM "$pid"
  local deadline=$((SECONDS + TIMEOUT))
  while kill -0 "$pid" 2>/dev/null; do
    if ((SECONDS >= deadline)); then
      die "mariadbd (pid $pid) still running after ${TIMEOUT}s; see $LOGFILE"
    fi
    sleep 0.2
  done
  rm -f "$PIDFILE"
  log "stopped"
}

cmd_status() {
  local pid ver
  if pid="$(running_pid)"; then
    ver="$(root_sql -e 'SELECT VERSION()' 2>/dev/null || echo "not answering")"
    echo "mariadb: running (pid $pid, version $ver, 127.0.0.1:$PORT, socket $SOCKET)"
    return 0
  fi
  echo "mariadb: stopped"
  return 3
}

cmd_env() {
  local dsn="kgsearch:${PASSWORD}@tcp(127.0.0.1:${PORT})"
  echo "export KGS_MARIADB_DSN=$(shell_quote "$dsn/kgsearch?parseTime=true")"
  echo "export KGS_TEST_MARIADB_DSN=$(shell_quote "$dsn/kgsearch_test?parseTime=true")"
}

cmd_client() {
  running_pid >/dev/null || die "not running (start it with: $0 start)"
  exec "$PREFIX/usr/bin/mariadb" --no-defaults --socket="$SOCKET" -uroot "$@"
}

case "${1:-}" in
  install) cmd_install ;;
  start) cmd_start ;;
  stop) cmd_stop ;;
  status) cmd_status ;;
  env) cmd_env ;;
  client) shift; cmd_client "$@" ;;
  *) echo "usage: $0 {install|start|stop|status|env|client}" >&2; exit 2 ;;
esac
