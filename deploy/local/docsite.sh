#!/usr/bin/env bash
# deploy/local/docsite.sh — serve a documentation site from a Debian package on
# loopback: the real sites the crawler and the relevance datasets (eval/) use.
#
# The HTML comes from a Debian bookworm package: `apt-get download` fetches the .deb
# into the state folder and `dpkg-deb -x` unpacks it there (nothing is installed on
# the system). A few files in these packages are symlinks to other packages (jquery
# and underscore from libjs-*), which stay dangling here: the pages' text does not
# need them. `python3 -m http.server` serves the HTML folder.
#
# Usage: deploy/local/docsite.sh SITE {install|start|stop|status|url}
#   SITE     pydocs      the Python 3.11 manual (python3.11-doc), port 8099
#            djangodocs  the Django 3.2 documentation (python-django-doc
#                        3:3.2.25-0+deb12u7, eval/django), port 8098
#            gitdocs     Git's manual pages and guides, AsciiDoc HTML (git-doc
#                        1:2.39.5-0+deb12u3, eval/gitdocs), port 8097
#            rustbook    "The Rust Programming Language", mdBook HTML (rust-doc
#                        1.63.0+dfsg1-2, eval/rustbook), port 8096
#            nodedocs    the Node.js 18 API reference (nodejs-doc
#                        18.20.4+dfsg-1~deb12u3, eval/nodedocs), port 8095
#            pgdocs      the PostgreSQL 15 manual, DocBook HTML (postgresql-doc-15
#                        15.20-0+deb12u1, eval/pgdocs), port 8094
#            octavedocs  the GNU Octave 7.3 manual, texinfo HTML, one page per
#                        node (octave-doc 7.3.0-2, eval/octave), port 8093
#            celerydocs  the Celery 5.2 documentation, Sphinx HTML with viewcode
#                        source listings (python-celery-doc 5.2.6-5,
#                        eval/celery), port 8092
#            drfdocs     the Django REST framework 3.14 documentation, MkDocs
#                        HTML with directory URLs (python-djangorestframework-doc
#                        3.14.0-2+deb12u1, eval/drf), port 8091
#   install  download (cached) and unpack the package; idempotent
#   start    install if needed and start the static server on the address;
#            a running server, or any server already answering at the URL,
#            is left alone; waits until it answers
#   stop     stop the server whose pid is in the pid file
#   status   print "running (pid N) at URL" or "stopped"; exit 0 / 3
#   url      print the site's start URL (http://ADDR:PORT/index.html)
# deploy/local/{pydocs,djangodocs,gitdocs,rustbook,nodedocs,pgdocs,octavedocs,celerydocs,drfdocs}.sh
# are this script with SITE set.
#
# Environment (defaults in brackets), with P the site's prefix (KGS_PYDOCS,
# KGS_DJANGODOCS, KGS_GITDOCS, KGS_RUSTBOOK, KGS_NODEDOCS, KGS_PGDOCS,
# KGS_OCTAVEDOCS, KGS_CELERYDOCS, KGS_DRFDOCS):
#   KGS_STATE      state folder [<repo>/.state]; the site lives in $KGS_STATE/SITE
#   P_ADDR         listen address [127.0.0.1]
#   P_PORT         listen port [the site's]
#   P_VERSION      package version to download [the site's pin; none: the newest]
#
# The crawler refuses loopback addresses unless allowed, e.g.
#   CRAWLER_ALLOW_HOSTS=127.0.0.1:8099,127.0.0.1:8098
set -euo pipefail

SITE="${1:-}"
shift || true
case "$SITE" in
pydocs)
	PACKAGE=python3.11-doc PIN="" DOCDIR=usr/share/doc/python3.11/html
	PREFIX=KGS_PYDOCS DEFAULT_PORT=8099
	;;
djangodocs)
	PACKAGE=python-django-doc PIN="3:3.2.25-0+deb12u7" DOCDIR=usr/share/doc/python-django-doc/html
	PREFIX=KGS_DJANGODOCS DEFAULT_PORT=8098
	;;
gitdocs)
	PACKAGE=git-doc PIN="1:2.39.5-0+deb12u3" DOCDIR=usr/share/doc/git-doc
	PREFIX=KGS_GITDOCS DEFAULT_PORT=8097
	;;
rustbook)
	# rust-doc also holds the standard library's API reference (thousands of
	# pages); only the book's folder is served.
	PACKAGE=rust-doc PIN="1.63.0+dfsg1-2" DOCDIR=usr/share/doc/rust-doc/html/book
	PREFIX=KGS_RUSTBOOK DEFAULT_PORT=8096
	;;
nodedocs)
	PACKAGE=nodejs-doc PIN="18.20.4+dfsg-1~deb12u3" DOCDIR=usr/share/doc/nodejs/api
	PREFIX=KGS_NODEDOCS DEFAULT_PORT=8095
	;;
pgdocs)
	PACKAGE=postgresql-doc-15 PIN="15.20-0+deb12u1" DOCDIR=usr/share/doc/postgresql-doc-15/html
	PREFIX=KGS_PGDOCS DEFAULT_PORT=8094
	;;
octavedocs)
	# octave-doc also holds liboctave's small manual (liboctave.html) and PDFs;
	# only the Octave manual's folder is served.
	PACKAGE=octave-doc PIN="7.3.0-2" DOCDIR=usr/share/doc/octave/octave.html
	PREFIX=KGS_OCTAVEDOCS DEFAULT_PORT=8093
	;;
celerydocs)
	# Sphinx with viewcode: _modules/ holds Celery's source as HTML pages. Debian
	# compressed changelog.html to changelog.html.gz, so links to it answer 404.
	PACKAGE=python-celery-doc PIN="5.2.6-5" DOCDIR=usr/share/doc/python-celery-doc/html
	PREFIX=KGS_CELERYDOCS DEFAULT_PORT=8092
	;;
drfdocs)
	# MkDocs with directory URLs: a page is <section>/<page>/index.html and is
	# linked as <section>/<page>/ (http.server answers it with index.html).
	PACKAGE=python-djangorestframework-doc PIN="3.14.0-2+deb12u1" DOCDIR=usr/share/doc/python3-djangorestframework/html
	PREFIX=KGS_DRFDOCS DEFAULT_PORT=8091
	;;
*)
	echo "usage: $0 {pydocs|djangodocs|gitdocs|rustbook|nodedocs|pgdocs|octavedocs|celerydocs|drfdocs} {install|start|stop|status|url}" >&2
	exit 2
	;;
esac

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
STATE="${KGS_STATE:-$REPO/.state}"
BASE="$STATE/$SITE"
DEBS="$BASE/debs"
ROOT="$BASE/root"
HTML="$ROOT/$DOCDIR"
PIDFILE="$BASE/server.pid"
LOGFILE="$BASE/server.log"
addr_var="${PREFIX}_ADDR" port_var="${PREFIX}_PORT" version_var="${PREFIX}_VERSION"
ADDR="${!addr_var:-127.0.0.1}"
PORT="${!port_var:-$DEFAULT_PORT}"
VERSION="${!version_var-$PIN}"
STAMP="$ROOT/.kgs-installed"

log() { echo "$SITE: $*" >&2; }
die() { log "error: $*"; exit 1; }

url() { echo "http://$ADDR:$PORT/index.html"; }

# download fetches the package (the pinned version when set) into $DEBS.
download() {
	local want="$PACKAGE${VERSION:+=$VERSION}"
	log "downloading $want with apt-get download"
	if (cd "$DEBS" && apt-get -o APT::Sandbox::User=root download "$want") >&2; then
		return 0
	fi
	# A fresh machine may have no package lists yet.
	log "refreshing the package lists (apt-get update) and retrying"
	apt-get update >&2 || die "apt-get update failed; cannot download $want"
	(cd "$DEBS" && apt-get -o APT::Sandbox::User=root download "$want") >&2 || die "apt-get download $want failed (set ${version_var}= to take the newest version)"
}

cmd_install() {
	if [[ -f "$STAMP" && -f "$HTML/index.html" ]]; then
		return 0
	fi
	mkdir -p "$DEBS"
	local deb
	deb="$(ls "$DEBS"/"${PACKAGE}"_*.deb 2>/dev/null | head -n1 || true)"
	if [[ -z "$deb" ]]; then
		download
		deb="$(ls "$DEBS"/"${PACKAGE}"_*.deb | head -n1)"
	fi
	log "unpacking $(basename "$deb")"
	rm -rf "$ROOT.tmp"
	mkdir -p "$ROOT.tmp"
	dpkg-deb -x "$deb" "$ROOT.tmp"
	[[ -f "$ROOT.tmp/$DOCDIR/index.html" ]] || die "$deb has no $DOCDIR/index.html"
	rm -rf "$ROOT"
	mv "$ROOT.tmp" "$ROOT"
	basename "$deb" >"$STAMP"
	log "installed $(find "$HTML" -type f -name '*.html' | wc -l) HTML pages under $HTML"
}

running_pid() {
	[[ -f "$PIDFILE" ]] || return 1
	local pid
	pid="$(cat "$PIDFILE")"
	[[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null || return 1
	# The pid must still be our server, not a recycled pid.
	tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline" | grep -q "http.server" || return 1
	echo "$pid"
}

answers() {
	python3 - "$(url)" <<'PY' >/dev/null 2>&1
import sys, urllib.request
urllib.request.urlopen(sys.argv[1], timeout=2).read(1)
PY
}

cmd_start() {
	if pid="$(running_pid)"; then
		log "already running (pid $pid) at $(url)"
		return 0
	fi
	# Another state folder's server on the same address (e.g. a second stack for an
	# isolated evaluation) serves the same package: leave it alone, install nothing.
	if answers; then
		log "$(url) already answers (a server this state folder did not start); left alone"
		return 0
	fi
	cmd_install
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
	echo "usage: $0 $SITE {install|start|stop|status|url}" >&2
	exit 2
	;;
esac
