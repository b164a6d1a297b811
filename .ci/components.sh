#!/usr/bin/env bash
# Components the tests need beyond Python packages, from Debian's packages:
#   postgresql  the job store's many-host tests (they start a throwaway server as the `postgres` user)
#   chromium    the browser tests of `lanecheck report` and `lanecheck serve` (Playwright drives it;
#               no browser download)
#   graphviz    `dot`, which lays out the report's state graphs
# Idempotent and non-interactive: installs only what is missing, starts nothing. `.ci/run` and the
# README's test command both call it, so a newcomer's run exercises the same components as CI.
set -euo pipefail

have_postgres() {
  command -v initdb >/dev/null 2>&1 && return 0
  compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null
}
have_chromium() { command -v chromium >/dev/null 2>&1; }
have_graphviz() { command -v dot >/dev/null 2>&1; }

missing=()
have_postgres || missing+=(postgresql)
have_chromium || missing+=(chromium)
have_graphviz || missing+=(graphviz)

if [ "${#missing[@]}" -eq 0 ]; then
  echo "components: PostgreSQL, Chromium and Graphviz found"
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "components: missing ${missing[*]}, and not root: skipping their install" \
    "(install those Debian packages yourself, or the tests that need them skip saying why)" >&2
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "components: missing ${missing[*]} and no apt-get: install them yourself" \
    "(the tests that need them skip saying why, and fail under CI=true)" >&2
  exit 0
fi
echo "components: installing ${missing[*]} (apt-get install)"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# postgresql's post-install starts a cluster where an init system runs; on a bare container
# policy-rc.d may refuse that, which is fine: the tests start their own throwaway server.
# fonts-dejavu-core gives Chromium and Graphviz a font, so text in screenshots and SVGs has a width.
apt-get install -y -qq --no-install-recommends "${missing[@]}" fonts-dejavu-core >/dev/null
status=0
have_postgres || { echo "components: apt-get installed postgresql but no initdb was found" >&2; status=1; }
have_chromium || { echo "components: apt-get installed chromium but no chromium command was found" >&2; status=1; }
have_graphviz || { echo "components: apt-get installed graphviz but no dot command was found" >&2; status=1; }
[ "$status" -eq 0 ] && echo "components: ${missing[*]} installed"
exit "$status"
