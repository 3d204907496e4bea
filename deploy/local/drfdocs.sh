#!/usr/bin/env bash
# deploy/local/drfdocs.sh — serve the Django REST framework 3.14 documentation
# (Debian bookworm's python-djangorestframework-doc 3.14.0-2+deb12u1, MkDocs HTML
# with directory URLs: api-guide/serializers/index.html is linked as
# api-guide/serializers/) on loopback, the site eval/drf is judged on.
#
# Usage: deploy/local/drfdocs.sh {install|start|stop|status|url}
#   url prints http://127.0.0.1:8091/index.html
# Environment: KGS_STATE, KGS_DRFDOCS_ADDR [127.0.0.1], KGS_DRFDOCS_PORT [8091],
# KGS_DRFDOCS_VERSION [3.14.0-2+deb12u1; empty: newest]. The crawler needs
# CRAWLER_ALLOW_HOSTS=127.0.0.1:8091. The work is done by deploy/local/docsite.sh.
exec "$(dirname "${BASH_SOURCE[0]}")/docsite.sh" drfdocs "$@"
