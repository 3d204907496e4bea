#!/usr/bin/env bash
# deploy/local/djangodocs.sh — serve the Django 3.2 documentation (Debian bookworm's
# python-django-doc 3:3.2.25-0+deb12u7) on loopback, the site eval/django is judged on.
#
# Usage: deploy/local/djangodocs.sh {install|start|stop|status|url}
#   url prints http://127.0.0.1:8098/index.html
# Environment: KGS_STATE, KGS_DJANGODOCS_ADDR [127.0.0.1], KGS_DJANGODOCS_PORT [8098],
# KGS_DJANGODOCS_VERSION [3:3.2.25-0+deb12u7; empty: newest]. The crawler needs
# CRAWLER_ALLOW_HOSTS=127.0.0.1:8098. The work is done by deploy/local/docsite.sh.
exec "$(dirname "${BASH_SOURCE[0]}")/docsite.sh" djangodocs "$@"
