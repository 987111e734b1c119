#!/usr/bin/env bash
# Makes a machine ready for `make test` (called by the Makefile's integration target and by
# .ci/run): the system packages the integration tests use, and PostgreSQL and Redis
# running at the local defaults. Idempotent and quick when everything is there.
#
# - Missing packages are installed with apt-get when running as root on Debian/Ubuntu;
#   otherwise the script prints the apt-get command and goes on (the tests that need a
#   missing tool fail naming it).
# - PostgreSQL (127.0.0.1:5432) and Redis (127.0.0.1:6379) are started when they are
#   installed but down. With TEST_DATABASE_URL / DATABASE_URL or REDIS_URL pointing
#   elsewhere, that server is yours to run and is left alone.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive

log() { printf '== %s\n' "$*"; }

db_url="${TEST_DATABASE_URL:-${DATABASE_URL:-}}"
manage_pg=true
case "$db_url" in
  '' | *@127.0.0.1:5432/* | *@localhost:5432/* | *@127.0.0.1/* | *@localhost/*) ;;
  *) manage_pg=false ;;
esac
manage_redis=true
case "${REDIS_URL:-}" in
  '' | redis://127.0.0.1:6379* | redis://localhost:6379*) ;;
  *) manage_redis=false ;;
esac

# --- system packages -------------------------------------------------------------
# PostgreSQL and Redis are the real components the integration tests use; nginx fronts
# the stack; vagrant and Go (+ HashiCorp's svchost/go-getter sources) are the real
# clients of the box service and the module registry; Chromium drives the web console.
want_pkgs=()
if $manage_pg; then
  { command -v psql >/dev/null 2>&1 && ls /etc/postgresql >/dev/null 2>&1; } || want_pkgs+=(postgresql)
fi
if $manage_redis; then
  command -v redis-server >/dev/null 2>&1 || want_pkgs+=(redis-server)
fi
[ -x /usr/sbin/nginx ] || want_pkgs+=(nginx)
command -v vagrant >/dev/null 2>&1 || want_pkgs+=(vagrant)
command -v go >/dev/null 2>&1 || want_pkgs+=(golang-go)
[ -d /usr/share/gocode/src/github.com/hashicorp/terraform-svchost ] || want_pkgs+=(golang-github-hashicorp-terraform-svchost-dev)
[ -d /usr/share/gocode/src/github.com/hashicorp/go-getter ] || want_pkgs+=(golang-github-hashicorp-go-getter-dev)
command -v openssl >/dev/null 2>&1 || want_pkgs+=(openssl)
# The secrets TLS listener and CLI tests drive curl against a certificate of their own CA.
command -v curl >/dev/null 2>&1 || want_pkgs+=(curl)
# Debian's Chromium, driven by playwright-core in the console's end-to-end tests
# (test/e2e/console); playwright never downloads a browser of its own here.
[ -x /usr/bin/chromium ] || want_pkgs+=(chromium)
# wrk: the external load generator of `make bench` (bench/wrk.ts); not a test dependency,
# but installed with the rest so that a test machine can also benchmark.
command -v wrk >/dev/null 2>&1 || want_pkgs+=(wrk)
fresh_postgres=false
if [ "${#want_pkgs[@]}" -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    log "installing: ${want_pkgs[*]}"
    [[ " ${want_pkgs[*]} " == *" postgresql "* ]] && fresh_postgres=true
    apt-get update -q
    apt-get install -y -q "${want_pkgs[@]}"
  else
    log "missing: ${want_pkgs[*]} (install with: sudo apt-get install -y ${want_pkgs[*]}); tests that need them will fail"
  fi
fi

# kubectl renders infra/k8s with its built-in kustomize (`kubectl kustomize`,
# scripts/k8s-validate.ts, test/infra/k8s.itest.ts). The package is `kubectl` where the
# configured archive has it; Debian bookworm only has `kubernetes-client` (kubectl 1.20,
# whose kustomize v2 predates the `labels:` field the base uses: the test then fails with
# kustomize's message, so install a kubectl of 1.22 or later).
if ! command -v kubectl >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    [ "${#want_pkgs[@]}" -gt 0 ] || apt-get update -q
    if apt-cache show kubectl >/dev/null 2>&1; then kubectl_pkg=kubectl; else kubectl_pkg=kubernetes-client; fi
    log "installing: $kubectl_pkg"
    apt-get install -y -q "$kubectl_pkg" || log "could not install $kubectl_pkg; the Kubernetes manifest test will fail"
  else
    log "missing: kubectl (install with: sudo apt-get install -y kubectl); the Kubernetes manifest test will fail"
  fi
fi

# --- PostgreSQL -------------------------------------------------------------------
if $manage_pg && command -v pg_isready >/dev/null 2>&1 && ls /etc/postgresql >/dev/null 2>&1; then
  pg_version=$(ls /etc/postgresql | sort -V | tail -n 1)
  if $fresh_postgres; then
    # A freshly installed cluster asks TCP clients for a password; the test suite
    # connects as postgres@127.0.0.1 without one, as on the development machines.
    hba=/etc/postgresql/$pg_version/main/pg_hba.conf
    sed -i -E 's/^(host\s+all\s+all\s+(127\.0\.0\.1\/32|::1\/128)\s+)\S+/\1trust/' "$hba"
  fi
  if ! pg_isready -q -h 127.0.0.1 -p 5432; then
    if [ "$(id -u)" = 0 ]; then
      log "starting PostgreSQL $pg_version"
      pg_ctlcluster --skip-systemctl-redirect "$pg_version" main start || true
      if $fresh_postgres; then pg_ctlcluster --skip-systemctl-redirect "$pg_version" main reload || true; fi
      for _ in $(seq 1 30); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 1; done
    else
      log "PostgreSQL is down (start it: sudo pg_ctlcluster --skip-systemctl-redirect $pg_version main start)"
    fi
  fi
fi

# --- Redis ------------------------------------------------------------------------
if $manage_redis && command -v redis-server >/dev/null 2>&1; then
  if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
    log "starting Redis"
    redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no
    for _ in $(seq 1 30); do redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 && break; sleep 0.5; done
  fi
fi
exit 0
