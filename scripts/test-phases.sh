#!/usr/bin/env bash
# `make test`, phase by phase: set-up, lint and types, the suite, the images, the deploy
# smoke. Each phase is timed, and the times are printed on one line at the end, also when
# a phase fails, so every CI log shows where its time went.
#   bash scripts/test-phases.sh MAKE UV [pytest arguments...]
set -uo pipefail
make_cmd=$1
uv_cmd=$2
shift 2
start=$SECONDS
summary=""
seed=""
trap 'echo "test phases: ${summary:-none} | total $((SECONDS - start))s${seed:+ | order --randomly-seed=$seed}"' EXIT

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

phase set-up $make_cmd sync system-packages console infra-up
phase lint+types $make_cmd lint typecheck
# the order is shuffled (pytest-randomly, on in every pytest run); the seed is printed
# here and on the last line (-q hides pytest's header) and reruns an order:
# `make test PYTEST_ARGS=--randomly-seed=N`. Two xdist workers, each sent the next module
# as it finishes (`--dist loadscope`, units and order from the root conftest.py): a module's
# cluster or `docproc dev` is started once, and two clusters may run at once, one on each.
seed=$(( (RANDOM << 15) | RANDOM ))
echo "test order: --randomly-seed=$seed"
phase suite $uv_cmd run pytest -q -n 2 --dist loadscope --no-loadscope-reorder --durations=25 --randomly-seed="$seed" "$@" libs services cli tests
phase images $make_cmd images
phase smoke $make_cmd deploy-smoke
