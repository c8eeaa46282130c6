#!/usr/bin/env bash
# Install Debian's chromium for the browser tests (idempotent). Playwright drives this system
# browser (executable_path=/usr/bin/chromium); no browser is ever downloaded by Playwright.
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
    echo "browser: $(/usr/bin/chromium --version 2>/dev/null || echo chromium) present"
    exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
echo "browser: $(/usr/bin/chromium --version) installed"
