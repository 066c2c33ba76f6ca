#!/usr/bin/env bash
# Chart checks for deploy/helm/docproc, runnable with no cluster and no network
# beyond the Go module proxy (for the one-time helm build):
#
#   scripts/helm.sh            # = all: install, lint, template, validate
#   scripts/helm.sh install    # build helm into .cache/bin if missing (go install, pinned)
#   scripts/helm.sh lint       # helm lint --strict with the defaults and every ci/*-values.yaml
#   scripts/helm.sh template   # helm template every values set into .cache/helm-rendered/
#                              # (or $HELM_RENDERED: the chart tests render into their own)
#   scripts/helm.sh validate   # validate the rendered manifests against the Kubernetes
#                              # OpenAPI schemas (kubernetes-validate, offline, strict)
#
# Environment: HELM_VERSION (pinned below), KUBE_VERSIONS (schema versions to validate
# against, oldest supported first), PYTHON (defaults to the workspace .venv).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
HELM_VERSION="${HELM_VERSION:-v3.22.0}"
BIN_DIR="$ROOT/.cache/bin"
HELM="$BIN_DIR/helm"
STAMP="$BIN_DIR/helm.version"
CHART="$ROOT/deploy/helm/docproc"
OUT="${HELM_RENDERED:-$ROOT/.cache/helm-rendered}"
RELEASE="docproc"
NAMESPACE="docproc"
# Oldest version the chart supports (Chart.yaml kubeVersion) and the newest schemas shipped.
KUBE_VERSIONS="${KUBE_VERSIONS:-1.29.0 1.37.0}"
# Capabilities used by `helm template` (a go-installed helm defaults to an old one).
TEMPLATE_KUBE_VERSION="${TEMPLATE_KUBE_VERSION:-1.33.0}"

log() { printf '[helm.sh] %s\n' "$*" >&2; }

install_helm() {
  if [[ -x "$HELM" && -f "$STAMP" && "$(cat "$STAMP")" == "$HELM_VERSION" ]]; then
    return 0
  fi
  if ! command -v go >/dev/null 2>&1; then
    log "go is not installed: cannot build helm $HELM_VERSION"
    return 3
  fi
  log "building helm $HELM_VERSION with go install (first run only) ..."
  mkdir -p "$BIN_DIR"
  if ! GOBIN="$BIN_DIR" CGO_ENABLED=0 GOFLAGS="${GOFLAGS:-} -trimpath" \
      go install "helm.sh/helm/v3/cmd/helm@$HELM_VERSION"; then
    log "go install helm.sh/helm/v3/cmd/helm@$HELM_VERSION failed"
    return 3
  fi
  printf '%s\n' "$HELM_VERSION" > "$STAMP"
}

values_sets() {
  # name<TAB>values file ("" = chart defaults). The skaffold profile values are rendered too.
  printf 'default\t\n'
  local f
  for f in "$CHART"/ci/*-values.yaml; do
    printf '%s\t%s\n' "$(basename "$f" -values.yaml)" "$f"
  done
  for f in "$ROOT"/deploy/helm/values-*.yaml; do
    [[ -e "$f" ]] || continue
    printf 'skaffold-%s\t%s\n' "$(basename "$f" .yaml | sed 's/^values-//')" "$f"
  done
}

lint() {
  install_helm
  local name file args
  while IFS=$'\t' read -r name file; do
    args=(lint --strict "$CHART" --kube-version "$TEMPLATE_KUBE_VERSION" --namespace "$NAMESPACE")
    [[ -n "$file" ]] && args+=(-f "$file")
    log "lint ($name)"
    "$HELM" "${args[@]}" >/dev/null || { "$HELM" "${args[@]}"; return 1; }
  done < <(values_sets)
}

template() {
  install_helm
  rm -rf "$OUT"
  mkdir -p "$OUT"
  local name file args
  while IFS=$'\t' read -r name file; do
    args=(template "$RELEASE" "$CHART" --namespace "$NAMESPACE" --kube-version "$TEMPLATE_KUBE_VERSION")
    [[ -n "$file" ]] && args+=(-f "$file")
    "$HELM" "${args[@]}" > "$OUT/$name.yaml"
    log "template ($name) -> ${OUT#"$ROOT"/}/$name.yaml"
  done < <(values_sets)
}

validate() {
  local py="${PYTHON:-$ROOT/.venv/bin/python}"
  if [[ ! -x "$py" ]]; then
    py="uv run --project $ROOT python"
  fi
  if ! compgen -G "$OUT/*.yaml" >/dev/null; then
    log "nothing rendered in $OUT: run '$0 template' first"
    return 1
  fi
  # Custom resources have no schema in kubernetes-validate; tests/chart checks them structurally.
  KUBE_VERSIONS="$KUBE_VERSIONS" $py - "$OUT"/*.yaml <<'PY'
import os
import sys

import kubernetes_validate
import yaml

CRD_GROUPS = ("keda.sh/", "monitoring.coreos.com/")
versions = os.environ["KUBE_VERSIONS"].split()
checked = skipped = 0
failures = []
for path in sys.argv[1:]:
    with open(path) as fh:
        docs = [d for d in yaml.safe_load_all(fh) if d]
    for doc in docs:
        ref = f"{os.path.basename(path)}: {doc.get('kind')}/{doc.get('metadata', {}).get('name')}"
        if str(doc.get("apiVersion", "")).startswith(CRD_GROUPS):
            skipped += 1
            continue
        for version in versions:
            try:
                kubernetes_validate.validate(doc, version, strict=True)
            except kubernetes_validate.ValidationError as exc:
                path_ = "/".join(str(p) for p in exc.path)
                failures.append(f"{ref} (k8s {version}) at {path_ or '/'}: {exc.message}")
            except kubernetes_validate.SchemaNotFoundError as exc:
                failures.append(f"{ref} (k8s {version}): {exc.message}")
        checked += 1
for line in failures:
    print(f"INVALID {line}")
print(
    f"[helm.sh] validated {checked} objects from {len(sys.argv) - 1} rendered sets against "
    f"Kubernetes {', '.join(versions)} (strict); {skipped} custom resources left to tests/chart"
)
sys.exit(1 if failures else 0)
PY
}

main() {
  local cmd="${1:-all}"
  case "$cmd" in
    install) install_helm ;;
    lint) lint ;;
    template) template ;;
    validate) validate ;;
    all) install_helm && lint && template && validate ;;
    version) install_helm && "$HELM" version --short ;;
    *) echo "usage: $0 [all|install|lint|template|validate|version]" >&2; return 2 ;;
  esac
}

main "$@"
