#!/usr/bin/env bash
# deploy/local/pgdocs.sh — serve the PostgreSQL 15 manual (Debian bookworm's
# postgresql-doc-15 15.20-0+deb12u1, DocBook HTML) on loopback, the site eval/pgdocs is
# judged on.
#
# Usage: deploy/local/pgdocs.sh {install|start|stop|status|url}
#   url prints http://127.0.0.1:8094/index.html
# Environment: KGS_STATE, KGS_PGDOCS_ADDR [127.0.0.1], KGS_PGDOCS_PORT [8094],
# KGS_PGDOCS_VERSION [15.20-0+deb12u1; empty: newest]. The crawler needs
# CRAWLER_ALLOW_HOSTS=127.0.0.1:8094. The work is done by deploy/local/docsite.sh.
exec "$(dirname "${BASH_SOURCE[0]}")/docsite.sh" pgdocs "$@"
