#!/usr/bin/env bash
# Neo4j 5.26 LTS community for local development and tests, without Docker.
#
#   deploy/local/neo4j.sh install   resolve Neo4j from Maven Central into <state>/neo4j/lib
#                                   (cached), write the config, set the initial password
#   deploy/local/neo4j.sh start     install if needed, start in the background, await Bolt
#   deploy/local/neo4j.sh stop      stop exactly the processes start launched (pid files)
#   deploy/local/neo4j.sh status    print state and pids; exit 0 running, 3 stopped
#   deploy/local/neo4j.sh env       print export lines for the services and the tests
#
# Environment (defaults in brackets):
#   KGS_STATE               state folder [<repo>/.state]; Neo4j lives in $KGS_STATE/neo4j
#   KGS_NEO4J_BOLT_PORT     Bolt port on 127.0.0.1 [17687]
#   KGS_NEO4J_HTTP_PORT     HTTP port on 127.0.0.1 [17474]; KGS_NEO4J_HTTP=off disables HTTP
#   KGS_NEO4J_PASSWORD      password of user neo4j [kgsearch-local]; applied only when the
#                           database is created (first start); later changes need a reset
#   KGS_NEO4J_HEAP          max heap [1g]; KGS_NEO4J_PAGECACHE page cache [256m]
#   KGS_NEO4J_START_TIMEOUT seconds to wait for readiness [180]
#   JAVA                    java binary (17 or 21) [java on PATH]
#
# Process model: `Neo4jCommand console` is a small launcher JVM that computes the server's
# JVM flags from neo4j.conf and runs the server (org.neo4j.server.CommunityEntryPoint) as a
# child JVM, forwarding SIGTERM to it through a shutdown hook. Both pids are recorded:
# run/kgs-launcher.pid and run/kgs-server.pid. stop sends SIGTERM to the launcher (clean
# shutdown of the server), then to the server if it is still there, and SIGKILL only after
# a timeout. Every pid is checked against its command line before it is signalled, so a
# recycled pid is never killed.
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$SCRIPT_DIR/../.." && pwd)
STATE=${KGS_STATE:-$REPO_ROOT/.state}
HOME_DIR=$STATE/neo4j
POM=$SCRIPT_DIR/neo4j/pom.xml
CONF_TMPL=$SCRIPT_DIR/neo4j/neo4j.conf.tmpl

BOLT_PORT=${KGS_NEO4J_BOLT_PORT:-17687}
HTTP_PORT=${KGS_NEO4J_HTTP_PORT:-17474}
HTTP_ENABLED=true
[[ ${KGS_NEO4J_HTTP:-on} == off ]] && HTTP_ENABLED=false
HEAP_MAX=${KGS_NEO4J_HEAP:-1g}
HEAP_INITIAL=${KGS_NEO4J_HEAP_INITIAL:-512m}
PAGECACHE=${KGS_NEO4J_PAGECACHE:-256m}
START_TIMEOUT=${KGS_NEO4J_START_TIMEOUT:-180}
DEFAULT_PASSWORD=kgsearch-local
JAVA=${JAVA:-java}

LIB=$HOME_DIR/lib
CONF_DIR=$HOME_DIR/conf
RUN_DIR=$HOME_DIR/run
LOG_DIR=$HOME_DIR/logs
CONSOLE_LOG=$LOG_DIR/console.log
LAUNCHER_PID=$RUN_DIR/kgs-launcher.pid
SERVER_PID=$RUN_DIR/kgs-server.pid
PASSWORD_FILE=$HOME_DIR/initial-password
LIB_MARKER=$LIB/.kgs-complete

# The launcher JVM only computes flags and waits for its child: keep it small.
LAUNCHER_OPTS=(-Xms16m -Xmx64m -XX:+UseSerialGC -XX:TieredStopAtLevel=1)

log() { printf 'neo4j: %s\n' "$*" >&2; }
die() { printf 'neo4j: error: %s\n' "$*" >&2; exit 1; }

neo4j_env() {
	export NEO4J_HOME=$HOME_DIR NEO4J_CONF=$CONF_DIR
}

# password prints the password of user neo4j: the environment wins, then the one recorded
# when the database was initialised, then the default.
password() {
	if [[ -n ${KGS_NEO4J_PASSWORD:-} ]]; then
		printf '%s' "$KGS_NEO4J_PASSWORD"
	elif [[ -s $PASSWORD_FILE ]]; then
		cat "$PASSWORD_FILE"
	else
		printf '%s' "$DEFAULT_PASSWORD"
	fi
}

check_java() {
	command -v "$JAVA" >/dev/null 2>&1 || die "java not found (set JAVA=/path/to/java, version 17 or 21)"
	local v
	v=$("$JAVA" -version 2>&1 | awk -F'"' '/version/ {print $2; exit}')
	case ${v%%.*} in
	17 | 21) ;;
	*) die "Neo4j 5.26 needs Java 17 or 21, $JAVA is version '$v' (set JAVA=...)" ;;
	esac
}

pom_sum() { sha256sum "$POM" | cut -d' ' -f1; }

lib_complete() { [[ -f $LIB_MARKER && $(cat "$LIB_MARKER") == "$(pom_sum)" ]]; }

install_lib() {
	if lib_complete; then
		return 0
	fi
	command -v mvn >/dev/null 2>&1 || die "mvn not found: Maven is needed once to resolve Neo4j from Maven Central (apt-get install maven)"
	log "resolving Neo4j from Maven Central into $LIB (first run: about a minute)"
	local tmp=$HOME_DIR/lib.tmp
	rm -rf "$tmp"
	mkdir -p "$tmp"
	if ! mvn -B -q -f "$POM" dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$tmp" >"$HOME_DIR/mvn.log" 2>&1; then
		die "mvn dependency:copy-dependencies failed, see $HOME_DIR/mvn.log"
	fi
	ls "$tmp"/neo4j-5.26.*.jar >/dev/null 2>&1 || die "resolved libraries lack the neo4j-5.26 jar, see $HOME_DIR/mvn.log"
	pom_sum >"$tmp/.kgs-complete"
	rm -rf "$LIB"
	mv "$tmp" "$LIB"
}

render_conf() {
	mkdir -p "$CONF_DIR" "$RUN_DIR" "$LOG_DIR" "$HOME_DIR"/{data,plugins,import,licenses}
	local tmp=$CONF_DIR/neo4j.conf.tmp
	sed -e "s#@HOME@#$HOME_DIR#g" \
		-e "s#@BOLT_PORT@#$BOLT_PORT#g" \
		-e "s#@HTTP_PORT@#$HTTP_PORT#g" \
		-e "s#@HTTP_ENABLED@#$HTTP_ENABLED#g" \
		-e "s#@HEAP_INITIAL@#$HEAP_INITIAL#g" \
		-e "s#@HEAP_MAX@#$HEAP_MAX#g" \
		-e "s#@PAGECACHE@#$PAGECACHE#g" \
		"$CONF_TMPL" >"$tmp"
	mv "$tmp" "$CONF_DIR/neo4j.conf"
}

# init_password sets the password of user neo4j before the database is first created.
# Neo4j ignores set-initial-password once the system database exists.
init_password() {
	if [[ -d $HOME_DIR/data/databases/system ]]; then
		return 0
	fi
	local pw
	pw=$(password)
	((${#pw} >= 8)) || die "KGS_NEO4J_PASSWORD must have at least 8 characters (Neo4j's minimum)"
	neo4j_env
	if ! "$JAVA" "${LAUNCHER_OPTS[@]}" -cp "$LIB/*" -Dbasedir="$HOME_DIR" \
		org.neo4j.server.startup.Neo4jAdminCommand dbms set-initial-password "$pw" >"$LOG_DIR/set-initial-password.log" 2>&1; then
		die "neo4j-admin dbms set-initial-password failed, see $LOG_DIR/set-initial-password.log"
	fi
	(umask 077 && printf '%s' "$pw" >"$PASSWORD_FILE")
}

cmd_install() {
	check_java
	mkdir -p "$HOME_DIR"
	install_lib
	render_conf
	init_password
}

# pid_matches PIDFILE PATTERN prints the pid recorded in PIDFILE when that process is alive
# and its command line contains PATTERN and this installation's home folder.
pid_matches() {
	local file=$1 pattern=$2 pid cmdline
	[[ -s $file ]] || return 1
	pid=$(cat "$file")
	[[ $pid =~ ^[0-9]+$ ]] || return 1
	[[ -r /proc/$pid/cmdline ]] || return 1
	cmdline=$(tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline") || return 1
	[[ $cmdline == *"$pattern"* && $cmdline == *"$HOME_DIR"* ]] || return 1
	printf '%s' "$pid"
}

launcher_pid() { pid_matches "$LAUNCHER_PID" org.neo4j.server.startup.Neo4jCommand; }
server_pid() { pid_matches "$SERVER_PID" org.neo4j.server.CommunityEntryPoint; }

# bolt_ping performs the Bolt handshake: magic 0x6060B017, then four proposed versions
# (5.0-5.8, 4.4); a ready server answers with the version it picked.
bolt_ping() {
	local reply
	# shellcheck disable=SC2016 # expanded by the inner bash
	reply=$(timeout 3 bash -c '
		exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
		printf "\x60\x60\xb0\x17\x00\x08\x08\x05\x00\x00\x04\x04\x00\x00\x00\x00\x00\x00\x00\x00" >&3
		head -c 4 <&3 | od -An -tx1 | tr -d " \n"
	' _ "$BOLT_PORT" 2>/dev/null) || return 1
	# A version is 00 00 <minor> <major>; anything else (an HTTP answer, zeros) is not Bolt.
	[[ $reply =~ ^0000[0-9a-f]{2}0[45]$ ]]
}

port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

find_server_child() {
	local lpid=$1 child
	for child in $(pgrep -P "$lpid" 2>/dev/null || true); do
		# 2>/dev/null before the redirection: a child that has exited (a short-lived
		# java the launcher ran) must not print "No such file or directory".
		if tr '\0' ' ' 2>/dev/null <"/proc/$child/cmdline" | grep -q 'org.neo4j.server.CommunityEntryPoint'; then
			printf '%s' "$child"
			return 0
		fi
	done
	return 1
}

cmd_start() {
	local lpid
	if lpid=$(launcher_pid) && bolt_ping; then
		log "already running (launcher pid $lpid, server pid $(server_pid || echo '?'), bolt 127.0.0.1:$BOLT_PORT)"
		return 0
	fi
	if lpid=$(launcher_pid); then
		log "launcher pid $lpid is running but Bolt is not answering yet; waiting"
	else
		if spid=$(server_pid); then
			die "a Neo4j server (pid $spid) from this state folder runs without its launcher; run '$0 stop' first"
		fi
		port_busy "$BOLT_PORT" && die "port 127.0.0.1:$BOLT_PORT is already in use by another process (set KGS_NEO4J_BOLT_PORT)"
		if [[ $HTTP_ENABLED == true ]] && port_busy "$HTTP_PORT"; then
			die "port 127.0.0.1:$HTTP_PORT is already in use by another process (set KGS_NEO4J_HTTP_PORT or KGS_NEO4J_HTTP=off)"
		fi
		cmd_install
		rm -f "$LAUNCHER_PID" "$SERVER_PID"
		ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
		neo4j_env
		: >"$CONSOLE_LOG"
		# setsid: the server must not die with the shell or terminal that started it.
		# The inner bash records its own pid, then execs the launcher JVM under that pid.
		# shellcheck disable=SC2016 # expanded by the inner bash
		setsid bash -c 'echo $$ >"$1"; shift; exec "$@"' _ "$LAUNCHER_PID" \
			nohup "$JAVA" "${LAUNCHER_OPTS[@]}" -cp "$LIB/*" -Dbasedir="$HOME_DIR" \
			org.neo4j.server.startup.Neo4jCommand console \
			>>"$CONSOLE_LOG" 2>&1 </dev/null &
		log "starting (logs: $CONSOLE_LOG, $LOG_DIR/neo4j.log, $LOG_DIR/debug.log)"
	fi
	local deadline=$((SECONDS + START_TIMEOUT)) spid
	while ((SECONDS < deadline)); do
		if ! lpid=$(launcher_pid); then
			sleep 0.2
			lpid=$(launcher_pid) || die "Neo4j exited during start-up, see $CONSOLE_LOG and $LOG_DIR/debug.log:
$(tail -n 15 "$CONSOLE_LOG" 2>/dev/null)"
		fi
		if [[ ! -s $SERVER_PID ]] && spid=$(find_server_child "$lpid"); then
			echo "$spid" >"$SERVER_PID"
		fi
		if grep -q 'INFO  Started\.' "$CONSOLE_LOG" 2>/dev/null && bolt_ping; then
			[[ -s $SERVER_PID ]] || die "Neo4j answers but its server JVM (child of launcher $lpid) was not found"
			log "ready after ${SECONDS}s: bolt://127.0.0.1:$BOLT_PORT (launcher pid $lpid, server pid $(cat "$SERVER_PID"))"
			return 0
		fi
		sleep 0.5
	done
	die "Neo4j did not become ready within ${START_TIMEOUT}s, see $CONSOLE_LOG and $LOG_DIR/debug.log (still running; '$0 stop' stops it)"
}

wait_gone() {
	local timeout=$1 pid
	shift
	local deadline=$((SECONDS + timeout))
	while ((SECONDS < deadline)); do
		local alive=0
		for pid in "$@"; do
			[[ -n $pid ]] && kill -0 "$pid" 2>/dev/null && alive=1
		done
		((alive == 0)) && return 0
		sleep 0.3
	done
	return 1
}

cmd_stop() {
	local lpid spid
	lpid=$(launcher_pid) || lpid=
	spid=$(server_pid) || spid=
	if [[ -z $spid && -n $lpid ]]; then
		spid=$(find_server_child "$lpid") || spid=
	fi
	if [[ -z $lpid && -z $spid ]]; then
		rm -f "$LAUNCHER_PID" "$SERVER_PID"
		log "not running"
		return 0
	fi
	log "stopping (launcher pid ${lpid:--}, server pid ${spid:--})"
	if [[ -n $lpid ]]; then
		kill -TERM "$lpid" 2>/dev/null || true
	else
		kill -TERM "$spid" 2>/dev/null || true
	fi
	if ! wait_gone 60 "$lpid" "$spid"; then
		if [[ -n $spid ]]; then kill -TERM "$spid" 2>/dev/null || true; fi
		if ! wait_gone 30 "$lpid" "$spid"; then
			log "clean shutdown timed out; killing"
			for p in $lpid $spid; do kill -KILL "$p" 2>/dev/null || true; done
			wait_gone 10 "$lpid" "$spid" || die "processes $lpid $spid survived SIGKILL"
		fi
	fi
	rm -f "$LAUNCHER_PID" "$SERVER_PID"
	log "stopped"
}

cmd_status() {
	local lpid spid
	if lpid=$(launcher_pid); then
		spid=$(server_pid) || spid=-
		if bolt_ping; then
			echo "neo4j: running (launcher pid $lpid, server pid $spid) bolt://127.0.0.1:$BOLT_PORT home $HOME_DIR"
		else
			echo "neo4j: starting or unresponsive (launcher pid $lpid, server pid $spid), Bolt 127.0.0.1:$BOLT_PORT not answering; log $CONSOLE_LOG"
		fi
		return 0
	fi
	if spid=$(server_pid); then
		echo "neo4j: server pid $spid running without its launcher; '$0 stop' stops it"
		return 0
	fi
	if lib_complete; then
		echo "neo4j: stopped (installed in $HOME_DIR)"
	else
		echo "neo4j: stopped (not installed)"
	fi
	return 3
}

cmd_env() {
	local uri="bolt://127.0.0.1:$BOLT_PORT" pw
	pw=$(password)
	printf 'export KGS_NEO4J_URI=%q KGS_NEO4J_USER=neo4j KGS_NEO4J_PASSWORD=%q\n' "$uri" "$pw"
	printf 'export KGS_TEST_NEO4J_URI=%q KGS_TEST_NEO4J_USER=neo4j KGS_TEST_NEO4J_PASSWORD=%q\n' "$uri" "$pw"
}

case ${1:-} in
install) cmd_install ;;
start) cmd_start ;;
stop) cmd_stop ;;
restart) cmd_stop && cmd_start ;;
status) cmd_status ;;
env) cmd_env ;;
*)
	echo "usage: $0 {install|start|stop|restart|status|env}" >&2
	exit 2
	;;
esac
