#!/usr/bin/env bash
# make demo: run docproc dev on the embedded default, ingest samples/, search, stop.
set -euo pipefail
cd "$(dirname "$0")/.."
PORT="${PORT:-8000}"
URL="http://127.0.0.1:${PORT}"
export DOCPROC_HOME="${DOCPROC_HOME:-$HOME/.local/share/docproc}"
LOG="$DOCPROC_HOME/dev.log"
UV="${UV:-uv}"
mkdir -p "$DOCPROC_HOME"

$UV run docproc dev --port "$PORT" >"$LOG" 2>&1 &
DEV=$!
trap 'kill $DEV 2>/dev/null; wait $DEV 2>/dev/null || true' EXIT
echo "docproc dev starting (log: $LOG) ..."
for _ in $(seq 1 240); do
  curl -fsS "$URL/readyz" >/dev/null 2>&1 && break
  kill -0 $DEV 2>/dev/null || { cat "$LOG"; exit 1; }
  sleep 0.5
done
curl -fsS "$URL/readyz" >/dev/null

# the client commands sign with the development key that docproc dev accepts
export ENV=dev
$UV run docproc ingest samples --collection demo --url "$URL"
for q in "how long do I have to return a product?" "when do new engineers join on-call?"; do
  echo; echo "search: $q"
  $UV run docproc search "$q" --collection demo --top-k 3 --url "$URL"
done
echo
echo "console: $URL/console/  (sign in as any user; the demo collection is there)"
echo "docproc dev stops now; \`make dev PORT=$PORT\` serves the console on the same data."
