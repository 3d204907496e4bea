#!/usr/bin/env bash
# deploy/local/pydocs.sh — serve the Python 3.11 manual (Debian bookworm's python3.11-doc)
# on loopback, the real site the crawler is benchmarked on and eval/pydocs is judged on.
#
# Usage: deploy/local/pydocs.sh {install|start|stop|status|url}
#   url prints http://127.0.0.1:8099/index.html
# Environment: KGS_STATE, KGS_PYDOCS_ADDR [127.0.0.1], KGS_PYDOCS_PORT [8099],
# KGS_PYDOCS_VERSION [newest]. The crawler needs CRAWLER_ALLOW_HOSTS=127.0.0.1:8099.
# The work is done by deploy/local/docsite.sh (see there).
exec "$(dirname "${BASH_SOURCE[0]}")/docsite.sh" pydocs "$@"
