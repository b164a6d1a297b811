#!/usr/bin/env bash
# Components the tests need beyond Python packages: the PostgreSQL server (Debian `postgresql`).
# Idempotent and non-interactive: installs only what is missing, starts nothing (the tests start a
# throwaway server of their own, as the `postgres` user when run as root). `.ci/run` and the README's
# test command both call it, so a newcomer's run exercises the same components as CI.
set -euo pipefail

have_postgres() {
  command -v initdb >/dev/null 2>&1 && return 0
  compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null
}

if have_postgres; then
  echo "components: PostgreSQL server found"
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "components: no PostgreSQL server, and not root: skipping its install" \
    "(install the 'postgresql' package yourself, or its tests skip saying why)" >&2
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "components: no PostgreSQL server and no apt-get: install PostgreSQL yourself" \
    "(its tests skip saying why, and fail under CI=true)" >&2
  exit 0
fi
echo "components: installing PostgreSQL (apt-get install postgresql)"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# The package's post-install starts a cluster where an init system runs; on a bare container
# policy-rc.d may refuse that, which is fine: the tests start their own throwaway server.
apt-get install -y -qq --no-install-recommends postgresql >/dev/null
if have_postgres; then
  echo "components: PostgreSQL installed"
else
  echo "components: apt-get installed postgresql but no initdb was found" >&2
  exit 1
fi
