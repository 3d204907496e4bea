#!/usr/bin/env bash
# deploy/local/pydocs.sh — serve the Python 3.11 manual on loopback, the real site the
# crawler is benchmarked on.
#
# The HTML comes from Debian bookworm's python3.11-doc package: `apt-get download`
# fetches the .deb into the state folder and `dpkg -x` unpacks it there (nothing is
# installed on the system). The manual lives under usr/share/doc/python3.11/html;
# a few files in it are symlinks to other packages (jquery and underscore from
# libjs-*), which stay dangling here: the pages' text does not need them.
#
# Usage: deploy/local/pydocs.sh {install|start|stop|status|url}
#   install  download (cached) and unpack the package; idempotent
#   start    install if needed and start `python3 -m http.server` on the address;
#            a running server is left alone; waits until it answers
#   stop     stop the server whose pid is in the pid file
#   status   print "running (pid N) at URL" or "stopped"; exit 0 / 3
#   url      print the manual's start URL (http://127.0.0.1:8099/index.html)
#
# Environment (defaults in brackets):
#   KGS_STATE          state folder [<repo>/.state]
#   KGS_PYDOCS_ADDR    listen address [127.0.0.1]
#   KGS_PYDOCS_PORT    listen port [8099]
#
# The crawler refuses loopback addresses unless allowed:
#   CRAWLER_ALLOW_HOSTS=127.0.0.1:8099
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
STATE="${KGS_STATE:-$REPO/.state}"
BASE="$STATE/pydocs"
DEBS="$BASE/debs"
ROOT="$BASE/root"
HTML="$ROOT/usr/share/doc/python3.11/html"
PIDFILE="$BASE/server.pid"
LOGFILE="$BASE/server.log"
ADDR="${KGS_PYDOCS_ADDR:-127.0.0.1}"
PORT="${KGS_PYDOCS_PORT:-8099}"
PACKAGE="python3.11-doc"
STAMP="$ROOT/.kgs-installed"

log() { echo "pydocs.sh: $*" >&2; }
die() { log "error: $*"; exit 1; }

url() { echo "http://$ADDR:$PORT/index.html"; }

cmd_install() {
	if [[ -f "$STAMP" && -f "$HTML/index.html" ]]; then
		return 0
	fi
	mkdir -p "$DEBS"
	local deb
	deb="$(ls "$DEBS"/${PACKAGE}_*.deb 2>/dev/null | head -n1 || true)"
	if [[ -z "$deb" ]]; then
		log "downloading $PACKAGE with apt-get download"
		if ! (cd "$DEBS" && apt-get -o APT::Sandbox::User=root download "$PACKAGE") >&2; then
			# A fresh machine may have no package lists yet.
			log "refreshing the package lists (apt-get update) and retrying"
			apt-get update >&2 || die "apt-get update failed; cannot download $PACKAGE"
			(cd "$DEBS" && apt-get -o APT::Sandbox::User=root download "$PACKAGE") >&2 || die "apt-get download $PACKAGE failed"
		fi
		deb="$(ls "$DEBS"/${PACKAGE}_*.deb | head -n1)"
	fi
	log "unpacking $(basename "$deb")"
	rm -rf "$ROOT.tmp"
	mkdir -p "$ROOT.tmp"
	dpkg -x "$deb" "$ROOT.tmp"
	[[ -f "$ROOT.tmp/usr/share/doc/python3.11/html/index.html" ]] || die "$deb has no usr/share/doc/python3.11/html/index.html"
	rm -rf "$ROOT"
	mv "$ROOT.tmp" "$ROOT"
	basename "$deb" >"$STAMP"
	log "installed $(find "$HTML" -name '*.html' | wc -l) HTML pages under $HTML"
}

running_pid() {
	[[ -f "$PIDFILE" ]] || return 1
	local pid
	pid="$(cat "$PIDFILE")"
	[[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null || return 1
	# The pid must still be our server, not a recycled pid.
	tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q "http.server" || return 1
	echo "$pid"
}

answers() {
	python3 - "$(url)" <<'EOF' >/dev/null 2>&1
import sys, urllib.request
urllib.request.urlopen(sys.argv[1], timeout=2).read(1)
EOF
}

cmd_start() {
	cmd_install
	if pid="$(running_pid)"; then
		log "already running (pid $pid) at $(url)"
		return 0
	fi
	mkdir -p "$BASE"
	log "starting static server on $ADDR:$PORT for $HTML"
	nohup python3 -m http.server --bind "$ADDR" --directory "$HTML" "$PORT" >"$LOGFILE" 2>&1 </dev/null &
	echo $! >"$PIDFILE"
	for _ in $(seq 1 50); do
		if answers; then
			log "running (pid $(cat "$PIDFILE")) at $(url)"
			return 0
		fi
		running_pid >/dev/null || die "server exited; see $LOGFILE"
		sleep 0.2
	done
	die "server did not answer at $(url) within 10s; see $LOGFILE"
}

cmd_stop() {
	local pid
	if ! pid="$(running_pid)"; then
		rm -f "$PIDFILE"
		log "not running"
		return 0
	fi
	kill "$pid"
	for _ in $(seq 1 50); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
	rm -f "$PIDFILE"
	log "stopped (pid $pid)"
}

cmd_status() {
	local pid
	if pid="$(running_pid)"; then
		echo "running (pid $pid) at $(url)"
		return 0
	fi
	echo "stopped"
	return 3
}

case "${1:-}" in
install) cmd_install ;;
start) cmd_start ;;
stop) cmd_stop ;;
status) cmd_status ;;
url) url ;;
*)
	echo "usage: $0 {install|start|stop|status|url}" >&2
	exit 2
	;;
esac
