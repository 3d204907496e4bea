# Sourced by scripts/run.sh; scripts/runlib_test.go tests these functions.

# allow_host LIST HOSTPORT prints the comma-separated LIST (CRAWLER_ALLOW_HOSTS)
# with HOSTPORT added when it is not in it: a CRAWLER_ALLOW_HOSTS set for another
# local site adds to the manual's host instead of replacing it.
allow_host() {
	local list=$1 add=$2 h
	local -a hosts
	IFS=, read -ra hosts <<<"$list"
	for h in "${hosts[@]}"; do
		h=${h// /}
		[[ $h == "$add" ]] && { printf '%s\n' "$list"; return; }
	done
	printf '%s\n' "${list:+$list,}$add"
}

# start_crawl CRAWLER BODY [curl options...] posts the crawl request BODY (JSON) to
# the crawler at CRAWLER and prints the new job's id. When an identical crawl is
# already queued or running (409, e.g. after a `make run` interrupted during its
# crawl), it says so and prints that job's id, to be followed instead. Any other
# refusal is printed with the crawler's detail (curl -f would say only "error:
# 400") and returns 1.
start_crawl() {
	local crawler=$1 body=$2 headers out code id detail
	shift 2
	headers=$(mktemp)
	if ! out=$(curl -sS -D "$headers" -w '\n%{http_code}' "$@" -X POST "$crawler/api/v1/crawls" \
		-H 'Content-Type: application/json' -d "$body"); then
		rm -f "$headers"
		echo "the crawler at $crawler cannot be reached" >&2
		return 1
	fi
	code=${out##*$'\n'}
	out=${out%$'\n'*}
	case $code in
	202)
		rm -f "$headers"
		printf '%s' "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])'
		;;
	409)
		id=$(tr -d '\r' <"$headers" | sed -n 's#^[Ll]ocation: */api/v1/crawls/##p')
		rm -f "$headers"
		if [[ -z $id ]]; then
			echo "the crawler refused the crawl (HTTP 409): $out" >&2
			return 1
		fi
		echo "an identical crawl is already queued or running: following job $id" >&2
		printf '%s\n' "$id"
		;;
	*)
		rm -f "$headers"
		detail=$(printf '%s' "$out" | python3 -c 'import json,sys; j=json.load(sys.stdin); print(j.get("detail") or j.get("title"))' 2>/dev/null) || detail=$out
		echo "the crawler refused the crawl (HTTP $code): $detail" >&2
		return 1
		;;
	esac
}

# running_line NAME ADDRESS [NOTE] prints one line of the "== running" block
# make run ends with, in columns: the notes line up whatever the ports' lengths.
running_line() {
	printf '  %-8s %-29s %s\n' "$1" "$2" "${3:-}" | sed 's/ *$//'
}
