#!/usr/bin/env bash
# deploy/local/gitdocs.sh — serve Git's manual pages and guides (Debian bookworm's
# git-doc 1:2.39.5-0+deb12u3, AsciiDoc HTML) on loopback, the site eval/gitdocs is
# judged on.
#
# Usage: deploy/local/gitdocs.sh {install|start|stop|status|url}
#   url prints http://127.0.0.1:8097/index.html
# Environment: KGS_STATE, KGS_GITDOCS_ADDR [127.0.0.1], KGS_GITDOCS_PORT [8097],
# KGS_GITDOCS_VERSION [1:2.39.5-0+deb12u3; empty: newest]. The crawler needs
# CRAWLER_ALLOW_HOSTS=127.0.0.1:8097. The work is done by deploy/local/docsite.sh.
exec "$(dirname "${BASH_SOURCE[0]}")/docsite.sh" gitdocs "$@"
