#!/usr/bin/env bash
# deploy/local/nodedocs.sh — serve the Node.js 18 API reference (Debian bookworm's
# nodejs-doc 18.20.4+dfsg-1~deb12u3) on loopback, the site eval/nodedocs is judged on.
#
# Usage: deploy/local/nodedocs.sh {install|start|stop|status|url}
#   url prints http://127.0.0.1:8095/index.html
# Environment: KGS_STATE, KGS_NODEDOCS_ADDR [127.0.0.1], KGS_NODEDOCS_PORT [8095],
# KGS_NODEDOCS_VERSION [18.20.4+dfsg-1~deb12u3; empty: newest]. The crawler needs
# CRAWLER_ALLOW_HOSTS=127.0.0.1:8095. The work is done by deploy/local/docsite.sh.
exec "$(dirname "${BASH_SOURCE[0]}")/docsite.sh" nodedocs "$@"
