#!/usr/bin/env bash
# deploy/local/rustbook.sh — serve "The Rust Programming Language" (the book in Debian
# bookworm's rust-doc 1.63.0+dfsg1-2, mdBook HTML) on loopback, the site eval/rustbook
# is judged on.
#
# Usage: deploy/local/rustbook.sh {install|start|stop|status|url}
#   url prints http://127.0.0.1:8096/index.html
# Environment: KGS_STATE, KGS_RUSTBOOK_ADDR [127.0.0.1], KGS_RUSTBOOK_PORT [8096],
# KGS_RUSTBOOK_VERSION [1.63.0+dfsg1-2; empty: newest]. The crawler needs
# CRAWLER_ALLOW_HOSTS=127.0.0.1:8096. The work is done by deploy/local/docsite.sh.
exec "$(dirname "${BASH_SOURCE[0]}")/docsite.sh" rustbook "$@"
