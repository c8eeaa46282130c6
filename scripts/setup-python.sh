#!/usr/bin/env bash
# Install the host and its development tools into the current Python (idempotent).
# Needs Python >= 3.11 with pip; reaches only PyPI.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
    echo "tablehost needs Python 3.11 or newer; $PYTHON is $("$PYTHON" --version 2>&1)" >&2
    exit 1
fi
"$PYTHON" -m pip install --quiet --disable-pip-version-check -e '.[dev,ray]'
echo "python: tablehost $("$PYTHON" -c 'import tablehost; print(tablehost.__version__)') installed"
