#!/usr/bin/env bash
# deploy/local/octavedocs.sh — serve the GNU Octave 7.3 manual (Debian bookworm's
# octave-doc 7.3.0-2, texinfo HTML, one page per node) on loopback, the site eval/octave
# is judged on.
#
# Usage: deploy/local/octavedocs.sh {install|start|stop|status|url}
#   url prints http://127.0.0.1:8093/index.html
# Environment: KGS_STATE, KGS_OCTAVEDOCS_ADDR [127.0.0.1], KGS_OCTAVEDOCS_PORT [8093],
# KGS_OCTAVEDOCS_VERSION [7.3.0-2; empty: newest]. The crawler needs
# CRAWLER_ALLOW_HOSTS=127.0.0.1:8093. The work is done by deploy/local/docsite.sh.
exec "$(dirname "${BASH_SOURCE[0]}")/docsite.sh" octavedocs "$@"
