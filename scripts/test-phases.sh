#!/usr/bin/env bash
# `make test`, phase by phase: set-up, lint and types, the suite, the images, the deploy
# smoke. Each phase is timed, and the times are printed on one line at the end, also when
# a phase fails, so every CI log shows where its time went. The images are built beside
# the lint, types and suite (their build is mostly downloads and file copies; the suite is
# CPU-bound): the images phase is the wait for them, and the line says how long they took.
#   bash scripts/test-phases.sh MAKE UV [pytest arguments...]
set -uo pipefail
make_cmd=$1
uv_cmd=$2
shift 2
start=$SECONDS
summary=""
seed=""
images_pid=""
images_log=$(mktemp)
finish() {
  [ -n "$images_pid" ] && kill "$images_pid" 2>/dev/null
  echo "test phases: ${summary:-none} | total $((SECONDS - start))s${seed:+ | order --randomly-seed=$seed}"
}
trap finish EXIT

phase() {
  local name=$1 began=$SECONDS rc
  shift
  "$@"
  rc=$?
  summary+="${summary:+ · }$name $((SECONDS - began))s"
  if [ "$rc" -ne 0 ]; then
    summary+=" (failed)"
    exit "$rc"
  fi
}

# helm is built from source once (scripts/helm.sh install: go install, minutes of CPU on a
# fresh machine): in the background while the set-up installs and downloads, so the chart
# tests find it built instead of building it inside the suite, under a test's timeout.
set_up() {
  bash scripts/helm.sh install &
  local helm=$! rc
  $make_cmd sync system-packages console infra-up
  rc=$?
  wait "$helm" || { echo "set-up: building helm failed (scripts/helm.sh install)"; return 1; }
  return "$rc"
}

phase set-up set_up
# scripts/images.sh, not `make images`: the console was built by the set-up, and building it
# again would rewrite what the console tests serve
( began=$SECONDS; bash scripts/images.sh; rc=$?; echo "images built in $((SECONDS - began))s"; exit "$rc" ) \
  > "$images_log" 2>&1 &
images_pid=$!

built_images() {
  wait "$images_pid"
  local rc=$?
  images_pid=""
  cat "$images_log"
  summary+="${summary:+ · }$(tail -n 1 "$images_log" | sed 's/^images //')"
  return "$rc"
}

phase lint+types $make_cmd lint typecheck
# the order is shuffled (pytest-randomly, on in every pytest run); the seed is printed
# here and on the last line (-q hides pytest's header) and reruns an order:
# `make test PYTEST_ARGS=--randomly-seed=N`. Two xdist workers, each sent the next module
# as it finishes (`--dist loadscope`, units and order from the root conftest.py): a module's
# cluster or `docproc dev` is started once, and two clusters may run at once, one on each.
seed=$(( (RANDOM << 15) | RANDOM ))
echo "test order: --randomly-seed=$seed"
phase suite $uv_cmd run pytest -q -n 2 --dist loadscope --no-loadscope-reorder --durations=25 --randomly-seed="$seed" "$@" libs services cli tests
phase images built_images
phase smoke $make_cmd smoke-journey
