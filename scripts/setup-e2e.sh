#!/usr/bin/env bash
# Installs what the end-to-end tests need: Debian packages (code-server's native-module build deps, Chromium) and
# code-server into the git-ignored .cache/code-server/. Idempotent: each step is skipped when already done, so a
# repeated run takes well under a second.
#
# usage: scripts/setup-e2e.sh [--without-browser | --apt-only] [VENV]
#   VENV: the project's virtualenv, which holds the ripgrep binary (default .venv)
#   --without-browser: leave out Chromium (`make run` and `make demo` need only code-server; the tests need both)
#   --apt-only: only the Debian packages every test needs (bubblewrap, the Bash sandbox; strace, the differential
#     harness in tests/differential); no code-server
set -euo pipefail
WITH_BROWSER=1
APT_ONLY=0
if [ "${1:-}" = --without-browser ]; then WITH_BROWSER=0; shift; fi
if [ "${1:-}" = --apt-only ]; then APT_ONLY=1; shift; fi
cd "$(dirname "$0")/.."
ROOT=$PWD
VENV=$(realpath "${1:-.venv}")
CODE_SERVER_VERSION=4.100.3      # the newest code-server that runs on Node 20 (it is VS Code 1.100.3)
DEST=$ROOT/.cache/code-server
STAMP=$DEST/.installed-$CODE_SERVER_VERSION

# code-server's native modules (node-pty, kerberos, @vscode/spdlog, native-keymap) compile from source; Chromium
# drives the workbench in the tests, and Debian's own python3 (externally managed) with python3-venv and python3-pip
# is the base Python of tests/e2e/test_python_env.py. bubblewrap: the Bash sandbox (its tests run in `make unit`);
# strace: the differential harness traces what commands the classifier calls read-only really do (tests/differential).
APT_PACKAGES=(bubblewrap strace)
[ "$APT_ONLY" = 0 ] && APT_PACKAGES+=(build-essential pkg-config libx11-dev libxkbfile-dev libsecret-1-dev libkrb5-dev)
[ "$APT_ONLY" = 0 ] && [ "$WITH_BROWSER" = 1 ] && APT_PACKAGES+=(chromium python3 python3-venv python3-pip)

log() { printf 'setup-e2e: %s\n' "$*" >&2; }

as_root() {
    if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
        log "needs root to run: $*  (run it as root, or install sudo)"; exit 1
    fi
}

install_apt_packages() {
    local missing=() pkg
    for pkg in "${APT_PACKAGES[@]}"; do
        dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    log "installing Debian packages: ${missing[*]}"
    local started=$SECONDS
    # Other processes on this machine may hold the dpkg lock: wait for it rather than fail.
    as_root env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq \
        --no-install-recommends "${missing[@]}" >/dev/null
    log "Debian packages installed in $((SECONDS - started)) s"
}

installed_version() {
    # --version also logs a line about its config file, so pick out the version number itself.
    XDG_CONFIG_HOME="$DEST/tmp/xdg/config" XDG_DATA_HOME="$DEST/tmp/xdg/data" \
        "$DEST/node_modules/.bin/code-server" --version 2>/dev/null | grep -Eo '^[0-9]+\.[0-9]+\.[0-9]+' | head -n 1
}

installed_version_ok() { [ -x "$DEST/node_modules/.bin/code-server" ] && [ "$(installed_version)" = "$CODE_SERVER_VERSION" ]; }

install_code_server() {
    [ -f "$STAMP" ] && return 0
    if installed_version_ok; then touch "$STAMP"; return 0; fi
    if [ ! -x "$VENV/bin/rg" ]; then
        log "no ripgrep binary at $VENV/bin/rg: run 'make setup' first (it installs ripgrep==14.1.0 into .venv)"
        exit 1
    fi
    log "installing code-server $CODE_SERVER_VERSION into $DEST (about a minute)"
    local started=$SECONDS
    rm -rf "$DEST"
    mkdir -p "$DEST/tmp/rg-seed" "$DEST/tmp/vscode-ripgrep-cache-1.15.11"
    # @vscode/ripgrep downloads rg from GitHub at install time, which this network refuses; it first looks in its
    # cache under $TMPDIR, so seed that cache with the rg binary from the PyPI wheel.
    cp "$VENV/bin/rg" "$DEST/tmp/rg-seed/rg"
    tar -C "$DEST/tmp/rg-seed" -czf \
        "$DEST/tmp/vscode-ripgrep-cache-1.15.11/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz" rg
    printf '{"name": "toolgate-code-server", "private": true}\n' >"$DEST/package.json"
    # unsafe_perm: npm refuses lifecycle scripts as root otherwise; yes: node-pty's `npx node-gyp` would wait for
    # an answer to "Ok to proceed?".
    (cd "$DEST" && TMPDIR="$DEST/tmp" npm_config_yes=true npm_config_unsafe_perm=true \
        npm install --no-audit --no-fund --loglevel=error "code-server@$CODE_SERVER_VERSION" >"$DEST/install.log" 2>&1) || {
        log "code-server install failed; the last lines of $DEST/install.log:"; tail -n 30 "$DEST/install.log" >&2; exit 1
    }
    installed_version_ok || {
        log "code-server does not report version $CODE_SERVER_VERSION after the install; see $DEST/install.log"; exit 1
    }
    rm -rf "$DEST/tmp"
    touch "$STAMP"
    log "code-server $CODE_SERVER_VERSION installed in $((SECONDS - started)) s"
}

install_apt_packages
[ "$APT_ONLY" = 1 ] && exit 0
install_code_server
