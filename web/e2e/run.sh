#!/usr/bin/env bash
# The browser suite: Debian's chromium (installed with apt when missing; never downloaded by Playwright), the
# service started with `npm start` on a free port with a fresh DATA_DIR, the vitest suite of web/e2e against it.
# Exits non-zero on any failure. Screenshots land in test-results/e2e/.
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="$PWD/node_modules/.bin:$PATH"

CHROMIUM_PATH="${CHROMIUM_PATH:-/usr/bin/chromium}"
if [ ! -x "$CHROMIUM_PATH" ]; then
  echo "== installing chromium (apt)"
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y chromium
fi
export CHROMIUM_PATH

port_free() { ! (echo >"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
PORT="${E2E_PORT:-18080}"
while ! port_free "$PORT"; do PORT=$((PORT + 1)); done

DATA_DIR="$(mktemp -d -t sealpay-e2e-XXXXXX)"
LOG="$DATA_DIR/service.log"
export E2E_BASE_URL="http://localhost:$PORT"

cleanup() {
  status=$?
  if [ -n "${SERVICE_PID:-}" ] && kill -0 "$SERVICE_PID" 2>/dev/null; then
    kill -TERM -- "-$SERVICE_PID" 2>/dev/null || kill -TERM "$SERVICE_PID" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$SERVICE_PID" 2>/dev/null || break; sleep 0.1; done
    kill -KILL -- "-$SERVICE_PID" 2>/dev/null || true
  fi
  if [ "$status" -ne 0 ] && [ -f "$LOG" ]; then
    echo "== service log (last 60 lines)"
    tail -n 60 "$LOG" || true
  fi
  rm -rf "$DATA_DIR"
  exit "$status"
}
trap cleanup EXIT INT TERM

echo "== starting the service on $E2E_BASE_URL (DATA_DIR $DATA_DIR)"
# Every test signs up accounts of its own, all from this machine's one address: the suite needs more than the
# default 30 signups an hour per IP (src/modules/accounts/accounts.test.ts tests that limit).
# setsid: the service gets its own process group, stopped as a whole at the end.
# The sandbox's test clock takes this secret (X-Sweep-Secret): the lock-out test moves the clock past its window, so
# the IP it locked (every test's, 127.0.0.1) logs in again for the files after it.
export E2E_SWEEP_SECRET="${E2E_SWEEP_SECRET:-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')}"
PORT="$PORT" DATA_DIR="$DATA_DIR" PUBLIC_ORIGIN="$E2E_BASE_URL" LOG_LEVEL=warn SWEEP_SECRET="$E2E_SWEEP_SECRET" \
  RATE_LIMIT_SIGNUPS_PER_HOUR="${RATE_LIMIT_SIGNUPS_PER_HOUR:-300}" \
  setsid npm start >"$LOG" 2>&1 &
SERVICE_PID=$!

ready=""
# Up to 5 minutes: a fresh DATA_DIR deploys the protocol, which takes minutes on a loaded 2-core machine.
for _ in $(seq 1 600); do
  if curl -sf "http://127.0.0.1:$PORT/readyz" >/dev/null 2>&1; then ready=yes; break; fi
  if ! kill -0 "$SERVICE_PID" 2>/dev/null; then break; fi
  sleep 0.5
done
# Another run that took the same port meanwhile would answer /readyz too: the service started here must still be
# alive (it exits at once on EADDRINUSE), or the suite would run against someone else's.
sleep 1
if [ -z "$ready" ] || ! kill -0 "$SERVICE_PID" 2>/dev/null; then
  echo "the service did not become ready (or exited: port $PORT taken?)"
  exit 1
fi
echo "== service ready; running the browser suite"

vitest run --config web/e2e/vitest.config.ts "$@"
