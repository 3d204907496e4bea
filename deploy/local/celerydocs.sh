#!/usr/bin/env bash
# deploy/local/celerydocs.sh — serve the Celery 5.2 documentation (Debian bookworm's
# python-celery-doc 5.2.6-5, Sphinx HTML built with viewcode, so _modules/ holds
# Celery's source as HTML pages) on loopback, the site eval/celery is judged on.
#
# Usage: deploy/local/celerydocs.sh {install|start|stop|status|url}
#   url prints http://127.0.0.1:8092/index.html
# Environment: KGS_STATE, KGS_CELERYDOCS_ADDR [127.0.0.1], KGS_CELERYDOCS_PORT [8092],
# KGS_CELERYDOCS_VERSION [5.2.6-5; empty: newest]. The crawler needs
# CRAWLER_ALLOW_HOSTS=127.0.0.1:8092. The work is done by deploy/local/docsite.sh.
exec "$(dirname "${BASH_SOURCE[0]}")/docsite.sh" celerydocs "$@"
