#!/bin/sh
# Install PostgreSQL's server binaries (initdb, pg_ctl, postgres) for the tests, on Debian/Ubuntu.
# The tests make a throwaway cluster of their own in a temporary folder (tests/conftest.py);
# nothing here starts a server. Idempotent: does nothing when initdb is already there.
set -eu

have_initdb() {
    command -v initdb >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1
}

if have_initdb; then
    echo "postgresql: $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | tail -1 || command -v initdb) present"
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "postgresql: initdb not found and no apt-get; install PostgreSQL's server package yourself" >&2
    exit 1
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends postgresql >/dev/null
have_initdb
echo "postgresql: installed $(ls -d /usr/lib/postgresql/*/bin | tail -1)"
