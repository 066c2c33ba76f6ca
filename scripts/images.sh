#!/usr/bin/env bash
# make images: build every service image from its Dockerfile, with podman (or docker).
#
#   scripts/images.sh                 # all five services, tagged localhost/docproc-<svc>:$IMAGE_TAG
#   scripts/images.sh parser upload   # only these
#   scripts/images.sh sizes           # print each image's size and its largest Python packages
#
# Base images: the Dockerfiles take PYTHON_IMAGE and UV_IMAGE as build arguments. When
# they are not given and the public ones (Docker Hub's python:3.11-slim-bookworm,
# ghcr.io's uv) cannot be pulled, local equivalents are built once and reused:
#   localhost/docproc-python:3.11-bookworm  Debian bookworm + Debian's python3.11, from
#       Debian packages (mmdebstrap), trusting the build host's own extra CAs
#       (/usr/local/share/ca-certificates: a package mirror's or proxy's) and uv told to
#       use the system store, so a mirror or TLS-inspecting proxy works in the build;
#   localhost/docproc-uv:<version>          the uv binary from its PyPI wheel.
# Point PYTHON_IMAGE/UV_IMAGE at a registry mirror to skip both (docs/operations.md).
#
# Environment: IMAGE_TAG (default dev), ENGINE (podman or docker; default podman), UV (the uv
# command; its cache dir, or UV_CACHE_DIR, is mounted into podman builds),
# DEBIAN_MIRROR (default http://deb.debian.org/debian), REBUILD=1 (build an image whose
# inputs are unchanged), NO_CACHE=1 (and reuse none of its layers: a fresh machine's build,
# the base images and the uv cache aside).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SERVICES=(upload parser embedder sync teardown)
TAG="${IMAGE_TAG:-dev}"
ENGINE="${ENGINE:-podman}"
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
CACHE="$ROOT/.cache/images"
UV="${UV:-uv}"
# the uv version every Dockerfile pins (they are kept in step; tests/chart checks it)
UV_VERSION="$(sed -n 's|^ARG UV_IMAGE=ghcr.io/astral-sh/uv:\(.*\)$|\1|p' "$ROOT/Dockerfile")"
LOCAL_PYTHON="localhost/docproc-python:3.11-bookworm"
LOCAL_UV="localhost/docproc-uv:$UV_VERSION"

log() { printf '[images] %s\n' "$*" >&2; }

# podman on hosts like CI's: crun refuses a hybrid cgroup layout, and without
# CAP_SYS_RESOURCE the default rlimit raise fails, so runc and explicit limits.
engine() {
  if [ "$ENGINE" = podman ]; then
    local runtime=()
    [ -x /usr/sbin/runc ] && runtime=(--runtime /usr/sbin/runc)
    podman "${runtime[@]}" "$@"
  else
    docker "$@"
  fi
}

limits() {
  if [ "$ENGINE" = podman ]; then
    printf '%s\n' --ulimit nofile=20000:20000 --ulimit nproc=32768:32768
  fi
}

ensure_engine() {
  command -v "$ENGINE" >/dev/null 2>&1 && return
  if [ "$ENGINE" = podman ] && [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
    log "installing podman, runc and mmdebstrap (Debian packages)"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq podman buildah runc mmdebstrap >/dev/null
  else
    log "no $ENGINE: install podman (or set ENGINE=docker)"
    exit 1
  fi
}

have_image() { engine image exists "$1" 2>/dev/null || engine image inspect "$1" >/dev/null 2>&1; }

pullable() { timeout 60 "$ENGINE" pull -q "$1" >/dev/null 2>&1; }

local_python() {
  have_image "$LOCAL_PYTHON" && return
  command -v mmdebstrap >/dev/null 2>&1 || {
    log "mmdebstrap is needed to build $LOCAL_PYTHON from Debian packages"
    exit 1
  }
  mkdir -p "$CACHE"
  log "building $LOCAL_PYTHON from Debian packages ($MIRROR)"
  local cas=()
  if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
    cas=(--customize-hook='copy-in /usr/local/share/ca-certificates /usr/local/share'
      --customize-hook='chroot "$1" update-ca-certificates')
  fi
  mmdebstrap --variant=apt --include=python3.11,ca-certificates \
    --customize-hook='chroot "$1" ln -sf /usr/bin/python3.11 /usr/local/bin/python3.11' \
    --customize-hook='chroot "$1" ln -sf /usr/bin/python3.11 /usr/local/bin/python3' \
    "${cas[@]}" bookworm "$CACHE/bookworm-python.tar" "$MIRROR" 2>"$CACHE/mmdebstrap.log"
  engine import --change 'ENV UV_SYSTEM_CERTS=1' --change 'CMD ["python3.11"]' \
    "$CACHE/bookworm-python.tar" "$LOCAL_PYTHON" >/dev/null
  rm -f "$CACHE/bookworm-python.tar"
}

local_uv() {
  have_image "$LOCAL_UV" && return
  log "building $LOCAL_UV from the uv $UV_VERSION wheel (PyPI)"
  local work
  work="$(mktemp -d)"
  python3 -m pip download --quiet --no-deps --only-binary=:all: -d "$work" "uv==$UV_VERSION"
  python3 -m zipfile -e "$work"/uv-*.whl "$work/wheel"
  install -m 0755 "$work"/wheel/uv-*.data/scripts/uv "$work/uv"
  printf 'FROM scratch\nCOPY uv /uv\n' >"$work/Containerfile"
  engine build -q -t "$LOCAL_UV" "$work" >/dev/null
  rm -rf "$work"
}

base_images() {
  if [ -z "${PYTHON_IMAGE:-}" ]; then
    if pullable python:3.11-slim-bookworm; then
      PYTHON_IMAGE=python:3.11-slim-bookworm
    else
      log "python:3.11-slim-bookworm cannot be pulled; using a local Debian build"
      local_python
      PYTHON_IMAGE="$LOCAL_PYTHON"
    fi
  fi
  if [ -z "${UV_IMAGE:-}" ]; then
    if pullable "ghcr.io/astral-sh/uv:$UV_VERSION"; then
      UV_IMAGE="ghcr.io/astral-sh/uv:$UV_VERSION"
    else
      log "ghcr.io/astral-sh/uv:$UV_VERSION cannot be pulled; using the PyPI wheel"
      local_uv
      UV_IMAGE="$LOCAL_UV"
    fi
  fi
}

# The host's uv cache (filled by `uv sync`), mounted into the build as UV_CACHE_DIR so the
# wheels are not downloaded again; podman only (docker build has no volumes: its cache mount).
uv_cache() {
  [ "$ENGINE" = podman ] || return 0
  local dir
  dir="${UV_CACHE_DIR:-$($UV cache dir 2>/dev/null || true)}"
  [ -n "$dir" ] && [ -d "$dir" ] || return 0
  printf '%s\n' --volume "$dir:/uv-cache" --build-arg UV_CACHE_DIR=/uv-cache
}

# What an image is built from, as one digest: the Dockerfile, the base images, the workspace
# metadata and the sources this service's context sends (what .dockerignore keeps of
# libs/common and services/<svc>, the built console included). The image carries it as a
# label, so an image built from the same inputs is not built again.
fingerprint() {
  local svc=$1
  {
    printf '%s\n' "$svc" "$PYTHON_IMAGE" "$UV_IMAGE"
    engine image inspect --format '{{.Id}}' "$PYTHON_IMAGE" "$UV_IMAGE"
    cd "$ROOT" && find Dockerfile .dockerignore pyproject.toml uv.lock cli/pyproject.toml clients/python/pyproject.toml \
      libs/*/pyproject.toml services/*/pyproject.toml libs/common "services/$svc" -type f \
      -not -path '*/tests/*' -not -path '*/node_modules/*' -not -path '*/__pycache__/*' \
      -not -path '*/.venv/*' -not -path '*/.*_cache/*' -not -path '*.egg-info/*' \
      -not -name '*.py[cod]' -not -name '.env' -not -name '.env.*' -print0 |
      sort -z | xargs -0 sha256sum
  } | sha256sum | cut -c1-32
}

built_from() {
  engine image inspect --format '{{index .Labels "org.docproc.inputs"}}' "$1" 2>/dev/null || true
}

build() {
  local svc=$1 image="localhost/docproc-$svc:$TAG" started inputs
  started=$(date +%s)
  inputs=$(fingerprint "$svc")
  if [ -z "${REBUILD:-}${NO_CACHE:-}" ] && [ "$(built_from "$image")" = "$inputs" ]; then
    log "$image is up to date (same Dockerfile, bases and sources; REBUILD=1 builds it anyway)"
    return
  fi
  log "building $image"
  local fresh=()
  [ -n "${NO_CACHE:-}" ] && fresh=(--no-cache)
  # shellcheck disable=SC2046 # limits and uv_cache print one flag per line on purpose
  engine build --network host "${fresh[@]}" $(limits) $(uv_cache) --label "org.docproc.inputs=$inputs" \
    --build-arg "SERVICE=$svc" --build-arg "PYTHON_IMAGE=$PYTHON_IMAGE" \
    --build-arg "UV_IMAGE=$UV_IMAGE" -f "$ROOT/Dockerfile" -t "$image" "$ROOT" \
    >"$CACHE/build-$svc.log" 2>&1 || {
    tail -30 "$CACHE/build-$svc.log" >&2
    log "docproc-$svc failed; the whole log is $CACHE/build-$svc.log"
    exit 1
  }
  log "docproc-$svc:$TAG built in $(($(date +%s) - started)) s"
}

# Each image's size, then its five largest Python distributions (site-packages, MiB).
sizes() {
  for svc in "${SERVICES[@]}"; do
    local image="localhost/docproc-$svc:$TAG"
    have_image "$image" || continue
    local bytes
    bytes=$(engine image inspect --format '{{.Size}}' "$image")
    printf '%s %s MiB:' "docproc-$svc" $((bytes / 1048576))
    engine run --rm --read-only --user 10001:10001 --network none $(limits) --entrypoint sh "$image" -c \
      'cd /app/.venv/lib/python3.11/site-packages && du -sm -- * 2>/dev/null | sort -rn | head -5' |
      awk '{printf " %s %s;", $2, $1} END {print ""}'
  done
}

main() {
  mkdir -p "$CACHE"
  ensure_engine
  if [ "${1:-}" = sizes ]; then
    sizes
    return
  fi
  local wanted=("$@")
  [ ${#wanted[@]} -eq 0 ] && wanted=("${SERVICES[@]}")
  base_images
  for svc in "${wanted[@]}"; do
    build "$svc"
  done
  sizes
}

main "$@"
