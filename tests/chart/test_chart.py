"""Chart unit tests: render deploy/helm/docproc with scripts/helm.sh and assert on the YAML.

scripts/helm.sh builds the pinned helm with `go install` on first use; these tests
skip only when that build is impossible (no Go toolchain or no module proxy).
Custom resources (ScaledObject, ServiceMonitor, PrometheusRule) have no schema in
kubernetes-validate, so their structure is checked here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from docproc_common.bus.topics import consumers
from docproc_common.settings import DEV_JWT_SECRET, DEV_VAULT_KEY

from .conftest import CHART, ROOT, SCRIPT, Doc, _run, render, render_docs

OPERATIONS = ROOT / "docs" / "operations.md"


SERVICES = ("upload", "parser", "embedder", "sync", "teardown")
#: service (consumer group) -> the topics it consumes, from the one map the services subscribe
#: by: the chart reads its generated consumers.yaml (tests/test_topology.py), and its KEDA
#: triggers, scalers and lag alerts follow it
CONSUMED = {svc: set(topics) for svc, topics in consumers().items()}
SECRET_ENV = {
    "DATABASE__URL",
    "AUTH__JWT_SECRET",
    "VAULT__MASTER_KEY",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
}
# The development secrets built into docproc_common.settings and sample secret strings
# that the injection tests below try to smuggle in: none may ever appear in a render.
SENTINELS = (
    DEV_JWT_SECRET,
    DEV_VAULT_KEY,
    "s3ntinel-db-password",
    "s3ntinel-jwt-secret",
    "s3ntinel-vault-key",
    "s3ntinel-aws-secret",
)

_SVC = "(upload|parser|embedder|sync|teardown)"


def _exported_metric_names() -> frozenset[str]:
    """Every series name the five services really export (their metrics modules + the bus's)."""
    import importlib

    from docproc_common.observability import BusMetrics
    from prometheus_client import REGISTRY

    for svc in SERVICES:
        importlib.import_module(f"docproc_{svc}.metrics")
        BusMetrics(svc)
    names: set[str] = set()
    for metric in REGISTRY.collect():
        for sample in metric.samples:
            names.add(sample.name)
        names.add(metric.name)
        if metric.type == "counter":
            names.add(metric.name + "_total")
        if metric.type == "histogram":
            names.update(metric.name + suffix for suffix in ("_bucket", "_sum", "_count"))
    return frozenset(n for n in names if n.startswith("docproc_"))


ALLOWED_METRICS = [re.compile(re.escape(name)) for name in sorted(_exported_metric_names())]
EXPECTED_ALERTS = {
    "DocprocDLQGrowing",
    "DocprocOutboxAgeHigh",
    "DocprocConsumerLagNotDraining",
    "DocprocDocumentsStuck",
    "DocprocTeardownReservationsStale",
    "DocprocRetrievalQualityDropped",
}


# ----------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="session")
def rendered_dir(helm: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """scripts/helm.sh template into a folder of this run's own: ``.cache/helm-rendered`` is
    emptied by every render, so two runs (xdist workers, worktrees) sharing it read each
    other's half-written sets."""
    out = tmp_path_factory.mktemp("helm-rendered")
    result = _run("bash", SCRIPT, "template", env={"HELM_RENDERED": str(out)})
    assert result.returncode == 0, result.stderr
    return out


@pytest.fixture(scope="session")
def rendered(rendered_dir: Path) -> dict[str, list[Doc]]:
    """The chart defaults + every ci/*-values.yaml, rendered and parsed."""
    sets = {
        path.stem: [d for d in yaml.safe_load_all(path.read_text()) if d]
        for path in sorted(rendered_dir.glob("*.yaml"))
    }
    assert sets, "scripts/helm.sh template rendered nothing"
    return sets


# ----------------------------------------------------------------------------- helpers


def of_kind(docs: list[Doc], kind: str) -> list[Doc]:
    return [d for d in docs if d["kind"] == kind]


def by_name(docs: list[Doc], kind: str) -> dict[str, Doc]:
    return {d["metadata"]["name"]: d for d in of_kind(docs, kind)}


def component(doc: Doc) -> str:
    return str(doc["metadata"]["labels"]["app.kubernetes.io/component"])


def pod_specs(docs: list[Doc]) -> Iterator[tuple[Doc, Doc]]:
    for doc in docs:
        if doc["kind"] in {"Deployment", "Job", "StatefulSet", "DaemonSet"}:
            yield doc, doc["spec"]["template"]["spec"]


def hook_info(doc: Doc) -> tuple[set[str], int] | None:
    ann = doc["metadata"].get("annotations") or {}
    if "helm.sh/hook" not in ann:
        return None
    return set(ann["helm.sh/hook"].split(",")), int(ann.get("helm.sh/hook-weight", "0"))


def all_selectors(doc: Doc) -> Iterator[dict[str, Any]]:
    spec = doc.get("spec") or {}
    kind = doc["kind"]
    if kind == "Service":
        yield spec.get("selector") or {}
    elif kind in {"Deployment", "PodDisruptionBudget", "ServiceMonitor"}:
        yield spec["selector"].get("matchLabels") or {}
    elif kind == "NetworkPolicy":
        yield spec["podSelector"].get("matchLabels") or {}
    if kind == "Deployment":
        for c in spec["template"]["spec"].get("topologySpreadConstraints") or []:
            yield c["labelSelector"].get("matchLabels") or {}


def promql_metrics(expr: str) -> set[str]:
    """Metric names in a PromQL expression (label matchers, ranges, grouping and functions removed)."""
    text = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)
    text = re.sub(r"\{[^{}]*\}", " ", text)
    text = re.sub(r"\[[^\[\]]*\]", " ", text)
    text = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^()]*\)", " ", text)
    keywords = {"and", "or", "unless", "by", "without", "bool", "offset", "on", "ignoring"}
    names = set()
    for m in re.finditer(r"(?<![\w.$])([A-Za-z_:][A-Za-z0-9_:]*)(\s*\()?", text):
        name, call = m.group(1), m.group(2)
        if call or name in keywords or re.fullmatch(r"[eE]\d+", name):
            continue
        names.add(name)
    return names


def is_allowed_metric(name: str) -> bool:
    return any(p.fullmatch(name) for p in ALLOWED_METRICS)


def github_anchors(markdown: str) -> set[str]:
    anchors = set()
    for line in markdown.splitlines():
        m = re.match(r"^#{1,6}\s+(.*?)\s*$", line)
        if m:
            slug = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-")
            anchors.add(slug)
    return anchors


# ----------------------------------------------------------------------------- tests


class TestChartChecks:
    """The two script steps besides `template`, so the pytest run covers all chart CI."""

    def test_helm_lint_strict_for_every_values_set(self, helm: Path) -> None:
        result = _run("bash", SCRIPT, "lint")
        assert result.returncode == 0, result.stdout + result.stderr

    def test_rendered_manifests_match_kubernetes_schemas(
        self, rendered: dict[str, list[Doc]], rendered_dir: Path
    ) -> None:
        result = _run(
            "bash", SCRIPT, "validate", timeout=600, env={"HELM_RENDERED": str(rendered_dir)}
        )
        assert result.returncode == 0, result.stdout + result.stderr
        assert f"from {len(rendered)} rendered sets" in result.stderr + result.stdout


class TestRenderSets:
    def test_every_ci_values_file_is_rendered(self, rendered: dict[str, list[Doc]]) -> None:
        expected = {"default"} | {
            p.name.removesuffix("-values.yaml") for p in (CHART / "ci").glob("*-values.yaml")
        }
        assert expected <= set(rendered)
        assert {"keda", "hpa", "networkpolicy", "pvc", "dev"} <= set(rendered)

    def test_values_yaml_matches_the_schema(self) -> None:
        schema = json.loads((CHART / "values.schema.json").read_text())
        values = yaml.safe_load((CHART / "values.yaml").read_text())
        jsonschema.Draft7Validator.check_schema(schema)
        jsonschema.Draft7Validator(schema).validate(values)

    def test_one_deployment_and_service_per_enabled_service(
        self, rendered: dict[str, list[Doc]]
    ) -> None:
        for name, docs in rendered.items():
            assert {component(d) for d in of_kind(docs, "Deployment")} == set(SERVICES), name
            assert {component(d) for d in of_kind(docs, "Service")} == set(SERVICES), name

    def test_disabled_service_renders_nothing(self, helm: Path) -> None:
        docs = render_docs(helm, "--set", "services.sync.enabled=false")
        assert not [d for d in docs if d["metadata"]["name"] == "docproc-sync"]


class TestLabelsAndSelectors:
    def test_selectors_never_carry_chart_or_version(self, rendered: dict[str, list[Doc]]) -> None:
        for name, docs in rendered.items():
            for doc in docs:
                for selector in all_selectors(doc):
                    assert "helm.sh/chart" not in selector, (name, doc["metadata"]["name"])
                    assert "app.kubernetes.io/version" not in selector, doc["metadata"]["name"]

    def test_deployment_selector_is_name_instance_component(
        self, rendered: dict[str, list[Doc]]
    ) -> None:
        for dep in of_kind(rendered["default"], "Deployment"):
            selector = dep["spec"]["selector"]["matchLabels"]
            assert set(selector) == {
                "app.kubernetes.io/name",
                "app.kubernetes.io/instance",
                "app.kubernetes.io/component",
            }
            pod_labels = dep["spec"]["template"]["metadata"]["labels"]
            assert selector.items() <= pod_labels.items()
            assert "helm.sh/chart" not in pod_labels

    def test_service_selects_its_deployment_pods(self, rendered: dict[str, list[Doc]]) -> None:
        docs = rendered["default"]
        deployments = by_name(docs, "Deployment")
        for name, svc in by_name(docs, "Service").items():
            pod_labels = deployments[name]["spec"]["template"]["metadata"]["labels"]
            assert svc["spec"]["selector"].items() <= pod_labels.items()


class TestPods:
    def test_every_container_is_hardened_and_sized(self, rendered: dict[str, list[Doc]]) -> None:
        for name, docs in rendered.items():
            for owner, spec in pod_specs(docs):
                where = f"{name}: {owner['kind']}/{owner['metadata']['name']}"
                psc = spec["securityContext"]
                assert psc["runAsNonRoot"] is True, where
                assert psc["seccompProfile"]["type"] == "RuntimeDefault", where
                assert spec["automountServiceAccountToken"] is False, where
                for c in spec["containers"] + spec.get("initContainers", []):
                    sc = c["securityContext"]
                    assert sc["runAsNonRoot"] is True, where
                    assert sc["runAsUser"] != 0, where
                    assert sc["readOnlyRootFilesystem"] is True, where
                    assert sc["allowPrivilegeEscalation"] is False, where
                    assert sc["capabilities"]["drop"] == ["ALL"], where
                    assert "add" not in sc["capabilities"], where
                    assert sc["seccompProfile"]["type"] == "RuntimeDefault", where
                    res = c["resources"]
                    assert {"cpu", "memory"} <= set(res["requests"]), where
                    assert "memory" in res["limits"], where
                    mounts = {m["mountPath"]: m["name"] for m in c["volumeMounts"]}
                    assert "/tmp" in mounts, f"{where}: read-only root FS needs a /tmp emptyDir"
                    volumes = {v["name"]: v for v in spec["volumes"]}
                    assert "emptyDir" in volumes[mounts["/tmp"]], where
                    assert "command" not in c, f"{where}: command would replace the tini entrypoint"

    def test_every_service_container_has_probes_and_named_port(
        self, rendered: dict[str, list[Doc]]
    ) -> None:
        for name, docs in rendered.items():
            for dep in of_kind(docs, "Deployment"):
                (c,) = dep["spec"]["template"]["spec"]["containers"]
                where = f"{name}: {dep['metadata']['name']}"
                assert c["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}, where
                assert c["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "http"}, where
                assert c["startupProbe"]["httpGet"]["path"] == "/healthz", where
                assert c["ports"] == [
                    {"name": "http", "containerPort": 8000, "protocol": "TCP"},
                    {"name": "metrics", "containerPort": 9090, "protocol": "TCP"},
                ], where
                assert c["args"] == ["python", "-m", f"docproc_{component(dep)}"], where

    def test_every_service_serves_metrics_on_a_port_apart_from_the_api(
        self, rendered: dict[str, list[Doc]]
    ) -> None:
        """``/metrics`` is not on the API port (issue 25, item 11): each container is told
        its metrics port, which is not the one the API and the probes use."""
        for name, docs in rendered.items():
            for dep in of_kind(docs, "Deployment"):
                (c,) = dep["spec"]["template"]["spec"]["containers"]
                where = f"{name}: {dep['metadata']['name']}"
                ports = {p["name"]: p["containerPort"] for p in c["ports"]}
                env = {e["name"]: e.get("value") for e in c["env"]}
                assert env["HTTP__METRICS_PORT"] == str(ports["metrics"]), where
                assert ports["metrics"] != ports["http"], where

    def test_a_metrics_port_on_the_api_port_is_refused(self, helm: Path) -> None:
        result = render(helm, "--set", "services.sync.metricsPort=8000")
        assert result.returncode != 0
        assert "services.sync: the metrics port (8000) must differ" in result.stderr

    def test_a_container_port_moves_the_listener_and_its_probes(self, helm: Path) -> None:
        """Pods sharing a network namespace (hostNetwork; the deploy smoke) need one port each:
        the service listens where its `http` port says, so probes and Services follow it."""
        docs = render_docs(
            helm,
            "--set",
            "services.parser.containerPort=18102",
            "--set",
            "services.parser.metricsPort=18103",
        )
        for dep in of_kind(docs, "Deployment"):
            (c,) = dep["spec"]["template"]["spec"]["containers"]
            env = {e["name"]: e.get("value") for e in c["env"]}
            ports = {p["name"]: p["containerPort"] for p in c["ports"]}
            if component(dep) == "parser":
                assert ports == {"http": 18102, "metrics": 18103}
                assert env["HTTP__PORT"] == "18102"
                assert env["HTTP__METRICS_PORT"] == "18103"
            else:
                assert ports == {"http": 8000, "metrics": 9090}
                assert "HTTP__PORT" not in env  # the ConfigMap's 8000
                assert env["HTTP__METRICS_PORT"] == "9090"
            assert c["readinessProbe"]["httpGet"]["port"] == "http"

    def test_services_expose_metrics_and_upload_api(self, rendered: dict[str, list[Doc]]) -> None:
        for svc in of_kind(rendered["default"], "Service"):
            ports = {p["name"]: p for p in svc["spec"]["ports"]}
            assert ports["http-metrics"]["targetPort"] == "metrics"
            assert ports["http-metrics"]["port"] == 9090
            assert ("http" in ports) == (component(svc) == "upload")
            if "http" in ports:
                assert ports["http"]["targetPort"] == "http"

    def test_replicas_omitted_only_when_autoscaled(self, rendered: dict[str, list[Doc]]) -> None:
        for name, docs in rendered.items():
            scaled = {
                d["spec"]["scaleTargetRef"]["name"]
                for d in docs
                if d["kind"] in {"HorizontalPodAutoscaler", "ScaledObject"}
            }
            for dep in of_kind(docs, "Deployment"):
                assert ("replicas" in dep["spec"]) == (dep["metadata"]["name"] not in scaled), name

    def test_dev_set_is_single_replica_without_autoscaling_or_pdb(
        self, rendered: dict[str, list[Doc]]
    ) -> None:
        docs = rendered["dev"]
        assert all(d["spec"]["replicas"] == 1 for d in of_kind(docs, "Deployment"))
        for kind in ("HorizontalPodAutoscaler", "ScaledObject", "PodDisruptionBudget"):
            assert not of_kind(docs, kind)

    def test_pdb_selects_each_deployment(self, rendered: dict[str, list[Doc]]) -> None:
        docs = rendered["default"]
        deployments = by_name(docs, "Deployment")
        pdbs = by_name(docs, "PodDisruptionBudget")
        assert set(pdbs) == set(deployments)
        for name, pdb in pdbs.items():
            assert pdb["spec"]["selector"] == deployments[name]["spec"]["selector"]
            assert pdb["spec"]["maxUnavailable"] == 1


class TestConfig:
    def test_configmap_carries_the_settings_contract(self, rendered: dict[str, list[Doc]]) -> None:
        data = by_name(rendered["default"], "ConfigMap")["docproc-config"]["data"]
        assert data["ENV"] == "prod"
        assert data["BUS__MODE"] == "kafka"
        assert data["HTTP__HOST"] == "0.0.0.0"
        assert data["HTTP__PORT"] == "8000"
        assert data["KAFKA__BOOTSTRAP_SERVERS"]
        assert data["STORAGE__BACKEND"] == "s3"
        assert data["STORAGE__S3_BUCKET"]
        assert data["DOCPROC_HOME"].startswith("/tmp")
        assert "LIMITS__MAX_UPLOAD_SIZE_MB" in data

    def test_the_chat_limit_is_rendered_once_under_the_seeds_name(
        self, helm: Path, tmp_path: Path
    ) -> None:
        """The chat frontend reads ``CHAT_MAX_UPLOAD_SIZE_MB`` from the same ConfigMap key the
        API reads (docproc_common.settings.ENV_ALIASES): one value, never a second spelling."""
        docs = render_docs(
            helm, values={"common": {"limits": {"chatMaxUploadSizeMb": 25}}}, tmp=tmp_path
        )
        for cm in of_kind(docs, "ConfigMap"):
            data = cm.get("data") or {}
            if "STORAGE__BACKEND" not in data:
                continue  # not a settings ConfigMap
            assert data["CHAT_MAX_UPLOAD_SIZE_MB"] == "25", cm["metadata"]["name"]
            assert "LIMITS__CHAT_MAX_UPLOAD_SIZE_MB" not in data

    def test_what_the_parser_reads_is_one_value_every_service_parses(
        self, helm: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """``common.parserFormats`` reaches every service as ``FORMATS__*`` (the API and sync
        refuse by it, the parser checks it against its image), and the settings read it."""
        from docproc_common.settings import FormatSettings, Settings

        assert Settings.model_fields["formats"].default == FormatSettings()  # unset: probed
        default = render_docs(helm, tmp=tmp_path)
        declared = {"liteparse": False, "office": ["writer"]}
        changed = render_docs(helm, values={"common": {"parserFormats": declared}}, tmp=tmp_path)
        for docs, expected in (
            (
                default,
                FormatSettings(liteparse=True, office=frozenset({"writer", "calc", "impress"})),
            ),
            (changed, FormatSettings(liteparse=False, office=frozenset({"writer"}))),
        ):
            for cm in of_kind(docs, "ConfigMap"):
                data = cm.get("data") or {}
                if "STORAGE__BACKEND" not in data:
                    continue  # not a settings ConfigMap
                for key in ("FORMATS__LITEPARSE", "FORMATS__OFFICE"):
                    monkeypatch.setenv(key, data[key])
                assert Settings().formats == expected, cm["metadata"]["name"]

    def test_the_allowed_vision_endpoints_are_one_value_the_api_and_parser_read(
        self, helm: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """``common.vision.allowedBaseUrls`` reaches every service as
        ``PARSER__VISION_ALLOWED_BASE_URLS`` (the API refuses a vision model profile elsewhere,
        the parser sends nothing elsewhere); empty by default: the providers' own hosts only.
        An address with user info or a query is refused by the schema."""
        from docproc_common.settings import Settings

        listed = ["http://vllm.models:8000/v1"]
        for values, expected in (
            (None, []),
            ({"common": {"vision": {"allowedBaseUrls": listed}}}, listed),
        ):
            docs = render_docs(helm, values=values, tmp=tmp_path)
            settings_maps = [
                cm
                for cm in of_kind(docs, "ConfigMap")
                if "STORAGE__BACKEND" in (cm.get("data") or {})
            ]
            assert settings_maps
            for cm in settings_maps:
                monkeypatch.setenv(
                    "PARSER__VISION_ALLOWED_BASE_URLS",
                    cm["data"]["PARSER__VISION_ALLOWED_BASE_URLS"],
                )
                assert Settings().parser.vision_allowed_base_urls == expected
        bad = {"common": {"vision": {"allowedBaseUrls": ["http://u:p@host/v1"]}}}
        refused = render(helm, values=bad, tmp=tmp_path)
        assert refused.returncode != 0 and "allowedBaseUrls" in refused.stderr

    def test_services_create_missing_topics_as_the_topics_job_does(
        self, helm: Path, tmp_path: Path
    ) -> None:
        """A consumer creates its retry/DLQ topics when they are missing: with the same
        partitions and replication as the topics Job, never the broker's default."""
        docs = render_docs(
            helm, values={"jobs": {"topics": {"partitions": 6, "replication": 3}}}, tmp=tmp_path
        )
        settings_maps = [
            cm for cm in of_kind(docs, "ConfigMap") if "STORAGE__BACKEND" in (cm.get("data") or {})
        ]
        assert len(settings_maps) == 2  # the services' and the hook Jobs' copy
        for cm in settings_maps:
            assert cm["data"]["KAFKA__TOPIC_PARTITIONS"] == "6", cm["metadata"]["name"]
            assert cm["data"]["KAFKA__TOPIC_REPLICATION"] == "3", cm["metadata"]["name"]

    def test_a_kafka_namespace_reaches_the_services_and_the_keda_triggers(self, helm: Path) -> None:
        """Installations sharing one cluster: the services put every topic and consumer group
        under ``<namespace>.`` (KafkaSettings.on_broker), so KEDA must watch those names."""
        docs = render_docs(
            helm,
            "-f",
            str(CHART / "ci" / "keda-values.yaml"),
            "--set",
            "common.kafka.namespace=staging",
        )
        for cm in of_kind(docs, "ConfigMap"):
            if "STORAGE__BACKEND" in (cm.get("data") or {}):
                assert cm["data"]["KAFKA__NAMESPACE"] == "staging", cm["metadata"]["name"]
        scaled = {component(d): d for d in of_kind(docs, "ScaledObject")}
        assert set(scaled) == set(CONSUMED)
        for svc, so in scaled.items():
            triggers = [t["metadata"] for t in so["spec"]["triggers"]]
            assert {md["consumerGroup"] for md in triggers} == {f"staging.{svc}"}
            assert {md["topic"] for md in triggers} == {f"staging.{t}" for t in CONSUMED[svc]}

    @pytest.mark.parametrize("name", ["CHAT_MAX_UPLOAD_SIZE_MB", "LIMITS__CHAT_MAX_UPLOAD_SIZE_MB"])
    def test_a_second_chat_limit_in_env_is_refused_by_the_schema(
        self, helm: Path, tmp_path: Path, name: str
    ) -> None:
        result = render(helm, values={"common": {"env": {name: "99"}}}, tmp=tmp_path)
        assert result.returncode != 0
        assert "schema" in result.stderr

    def test_embedder_model_cache_is_on_the_writable_tmp(
        self, rendered: dict[str, list[Doc]]
    ) -> None:
        dep = by_name(rendered["default"], "Deployment")["docproc-embedder"]
        (c,) = dep["spec"]["template"]["spec"]["containers"]
        env = {e["name"]: e.get("value") for e in c["env"]}
        assert env["EMBEDDER__MODEL_CACHE_DIR"].startswith("/tmp/")

    def test_mounted_embedding_models_reach_upload_and_the_embedder_read_only(
        self, helm: Path, tmp_path: Path
    ) -> None:
        volume = {"persistentVolumeClaim": {"claimName": "embedding-models"}}
        docs = render_docs(
            helm, values={"embeddingModels": {"enabled": True, "volume": volume}}, tmp=tmp_path
        )
        for name, dep in by_name(docs, "Deployment").items():
            pod = dep["spec"]["template"]["spec"]
            (c,) = pod["containers"]
            env = {e["name"]: e.get("value") for e in c["env"]}
            mounts = {m["name"]: m for m in c["volumeMounts"]}
            volumes = {v["name"]: v for v in pod["volumes"]}
            if name in ("docproc-upload", "docproc-embedder"):
                assert env["EMBEDDER__MODELS_DIR"] == "/models/embedding"
                assert mounts["embedding-models"] == {
                    "name": "embedding-models",
                    "mountPath": "/models/embedding",
                    "readOnly": True,
                }
                assert volumes["embedding-models"] == {"name": "embedding-models", **volume}
            else:
                assert "EMBEDDER__MODELS_DIR" not in env and "embedding-models" not in volumes

    def test_no_embedding_models_are_mounted_by_default(
        self, rendered: dict[str, list[Doc]]
    ) -> None:
        for dep in of_kind(rendered["default"], "Deployment"):
            pod = dep["spec"]["template"]["spec"]
            assert "embedding-models" not in {v["name"] for v in pod["volumes"]}
            assert all(e["name"] != "EMBEDDER__MODELS_DIR" for e in pod["containers"][0]["env"])

    def test_mounted_embedding_models_need_a_volume(self, helm: Path, tmp_path: Path) -> None:
        result = render(helm, values={"embeddingModels": {"enabled": True}}, tmp=tmp_path)
        assert result.returncode != 0
        assert "embeddingModels.volume: a volume source is required" in result.stderr

    def test_every_pod_loads_the_configmap(self, rendered: dict[str, list[Doc]]) -> None:
        for dep in of_kind(rendered["default"], "Deployment"):
            (c,) = dep["spec"]["template"]["spec"]["containers"]
            refs = [e["configMapRef"]["name"] for e in c["envFrom"] if "configMapRef" in e]
            assert refs == ["docproc-config"]
            assert "checksum/config" in dep["spec"]["template"]["metadata"]["annotations"]

    def test_s3_backend_has_no_volume_and_local_backend_shares_one_claim(
        self, rendered: dict[str, list[Doc]]
    ) -> None:
        assert not of_kind(rendered["default"], "PersistentVolumeClaim")
        docs = rendered["pvc"]
        (pvc,) = of_kind(docs, "PersistentVolumeClaim")
        assert pvc["spec"]["accessModes"] == ["ReadWriteMany"]
        assert pvc["metadata"]["annotations"]["helm.sh/resource-policy"] == "keep"
        data = by_name(docs, "ConfigMap")["docproc-config"]["data"]
        assert data["STORAGE__BACKEND"] == "local"
        assert "STORAGE__S3_BUCKET" not in data
        for dep in of_kind(docs, "Deployment"):
            spec = dep["spec"]["template"]["spec"]
            claims = [
                v["persistentVolumeClaim"]["claimName"]
                for v in spec["volumes"]
                if "persistentVolumeClaim" in v
            ]
            assert claims == [pvc["metadata"]["name"]]
            mounts = {m["mountPath"] for m in spec["containers"][0]["volumeMounts"]}
            assert data["STORAGE__MEDIA_DIR"] in mounts

    def test_existing_claim_is_used_not_created(self, helm: Path) -> None:
        docs = render_docs(
            helm,
            "--set",
            "common.storage.backend=local",
            "--set",
            "common.storage.local.persistence.existingClaim=shared-media",
        )
        assert not of_kind(docs, "PersistentVolumeClaim")
        for _, spec in pod_specs(of_kind(docs, "Deployment")):
            assert {
                "name": "media",
                "persistentVolumeClaim": {"claimName": "shared-media"},
            } in spec["volumes"]

    def test_a_mounted_cross_encoder_reaches_upload_and_the_embedder_only(
        self, helm: Path, rendered: dict[str, list[Doc]]
    ) -> None:
        """``common.rerankModel.volume``: read-only in the two pods that rerank, with the
        setting that points them at it; nothing anywhere without it."""
        for _, spec in pod_specs(rendered["default"]):
            assert all(v["name"] != "rerank-model" for v in spec.get("volumes", []))
        source = {"persistentVolumeClaim": {"claimName": "cross-encoder", "readOnly": True}}
        docs = render_docs(helm, "--set-json", f"common.rerankModel.volume={json.dumps(source)}")
        reranking = set()
        for dep, spec in pod_specs(of_kind(docs, "Deployment")):
            (c,) = spec["containers"]
            env = {e["name"]: e.get("value") for e in c["env"]}
            mounts = [m for m in c["volumeMounts"] if m["name"] == "rerank-model"]
            volumes = [v for v in spec["volumes"] if v["name"] == "rerank-model"]
            if not volumes:
                assert not mounts and "EMBEDDER__RERANK_MODEL_DIR" not in env
                continue
            reranking.add(component(dep))
            assert volumes == [{"name": "rerank-model", **source}]
            assert mounts == [
                {"name": "rerank-model", "mountPath": "/models/reranker", "readOnly": True}
            ]
            assert env["EMBEDDER__RERANK_MODEL_DIR"] == "/models/reranker"
        assert reranking == {"upload", "embedder"}

    def test_a_rerank_model_mount_path_must_be_absolute(self, helm: Path, tmp_path: Path) -> None:
        result = render(
            helm, values={"common": {"rerankModel": {"mountPath": "models"}}}, tmp=tmp_path
        )
        assert result.returncode != 0
        assert "schema" in result.stderr


class TestHooks:
    @pytest.mark.parametrize("job", ["docproc-migrate", "docproc-topics"])
    def test_job_is_a_pre_install_pre_upgrade_hook_after_its_dependencies(
        self, rendered: dict[str, list[Doc]], job: str
    ) -> None:
        for name, docs in rendered.items():
            jobs = by_name(docs, "Job")
            assert job in jobs, name
            info = hook_info(jobs[job])
            assert info is not None, f"{name}: {job} is not a hook"
            events, weight = info
            assert events == {"pre-install", "pre-upgrade"}, name
            spec = jobs[job]["spec"]["template"]["spec"]
            assert spec["restartPolicy"] == "Never"
            (c,) = spec["containers"]
            config_maps = {
                e["configMapRef"]["name"] for e in c.get("envFrom", []) if "configMapRef" in e
            }
            secrets = {e["secretRef"]["name"] for e in c.get("envFrom", []) if "secretRef" in e}
            secrets |= {
                e["valueFrom"]["secretKeyRef"]["name"]
                for e in c.get("env", [])
                if "secretKeyRef" in e.get("valueFrom", {})
            }
            assert config_maps, f"{name}: {job} reads no ConfigMap"
            for kind, names in (("ConfigMap", config_maps), ("Secret", secrets)):
                chart_made = by_name(docs, kind)
                for ref in names:
                    if ref not in chart_made:
                        continue  # an existing object the operator created: present before install
                    dep_info = hook_info(chart_made[ref])
                    assert dep_info is not None, f"{name}: {job} reads non-hook {kind} {ref}"
                    dep_events, dep_weight = dep_info
                    assert {"pre-install", "pre-upgrade"} <= dep_events, ref
                    assert dep_weight < weight, f"{name}: {kind} {ref} must be created before {job}"

    def test_migrate_job_runs_alembic_with_the_database_secret(
        self, rendered: dict[str, list[Doc]]
    ) -> None:
        job = by_name(rendered["default"], "Job")["docproc-migrate"]
        (c,) = job["spec"]["template"]["spec"]["containers"]
        assert c["args"] == ["python", "-m", "docproc_common.db.migrate"]
        env = {e["name"]: e for e in c["env"]}
        assert env["DATABASE__URL"]["valueFrom"]["secretKeyRef"] == {
            "name": "docproc-database",
            "key": "url",
        }

    def test_topics_job_reads_partitions_and_replication(
        self, rendered: dict[str, list[Doc]]
    ) -> None:
        docs = rendered["dev"]
        job = by_name(docs, "Job")["docproc-topics"]
        (c,) = job["spec"]["template"]["spec"]["containers"]
        assert c["args"] == ["python", "-m", "docproc_common.bus.topics", "create"]
        (ref,) = [e["configMapRef"]["name"] for e in c["envFrom"] if "configMapRef" in e]
        data = by_name(docs, "ConfigMap")[ref]["data"]
        assert data["KAFKA__TOPIC_PARTITIONS"] == "3"
        assert data["KAFKA__TOPIC_REPLICATION"] == "1"
        assert data["KAFKA__BOOTSTRAP_SERVERS"] == "kafka:9092"

    def test_hooks_can_be_switched_off(self, helm: Path) -> None:
        docs = render_docs(
            helm, "--set", "jobs.migrate.enabled=false", "--set", "jobs.topics.enabled=false"
        )
        assert not of_kind(docs, "Job")
        assert "docproc-hooks" not in by_name(docs, "ConfigMap")


class TestAutoscaling:
    def test_keda_scaledobject_per_consumer_on_its_group_lag(
        self, rendered: dict[str, list[Doc]]
    ) -> None:
        docs = rendered["keda"]
        scaled = {component(d): d for d in of_kind(docs, "ScaledObject")}
        assert set(scaled) == set(CONSUMED)
        hpas = {component(d) for d in of_kind(docs, "HorizontalPodAutoscaler")}
        assert hpas == {"upload"}, "upload consumes nothing and scales on CPU"
        deployments = by_name(docs, "Deployment")
        for svc, so in scaled.items():
            assert so["apiVersion"] == "keda.sh/v1alpha1"
            spec = so["spec"]
            assert spec["scaleTargetRef"]["name"] in deployments
            assert spec["scaleTargetRef"]["name"] == f"docproc-{svc}"
            assert 1 <= spec["minReplicaCount"] <= spec["maxReplicaCount"]
            triggers = spec["triggers"]
            assert {t["type"] for t in triggers} == {"kafka"}
            assert {t["metadata"]["topic"] for t in triggers} == CONSUMED[svc]
            for t in triggers:
                md = t["metadata"]
                assert md["consumerGroup"] == svc
                assert md["bootstrapServers"] == "b-1.kafka.internal:9096,b-2.kafka.internal:9096"
                assert int(md["lagThreshold"]) > 0
                assert all(isinstance(v, str) for v in md.values()), (
                    "KEDA metadata values are strings"
                )
                assert t["authenticationRef"] == {"name": "docproc-kafka"}

    def test_what_a_service_consumes_is_not_a_value(self, helm: Path, tmp_path: Path) -> None:
        """The topics a consumer group reads are the code's (consumers.yaml): a value naming
        other topics or another group would scale on lag nobody consumes, so it is refused."""
        values = {"services": {"parser": {"consumer": {"topics": ["docproc.x.y.v1"]}}}}
        result = render(helm, values=values, tmp=tmp_path)
        assert result.returncode != 0
        assert "additional properties 'consumer' not allowed" in result.stderr

    def test_hpa_on_cpu_when_keda_is_off(self, rendered: dict[str, list[Doc]]) -> None:
        docs = rendered["hpa"]
        assert not of_kind(docs, "ScaledObject")
        hpas = {component(d): d for d in of_kind(docs, "HorizontalPodAutoscaler")}
        assert set(hpas) == set(SERVICES)
        for svc, hpa in hpas.items():
            assert hpa["spec"]["scaleTargetRef"] == {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "name": f"docproc-{svc}",
            }
            names = [m["resource"]["name"] for m in hpa["spec"]["metrics"]]
            assert names[0] == "cpu"

    def test_auto_mode_follows_the_cluster(
        self, helm: Path, rendered: dict[str, list[Doc]]
    ) -> None:
        # Default mode is auto: no KEDA API in the capabilities -> HPAs ...
        assert not of_kind(rendered["default"], "ScaledObject")
        assert len(of_kind(rendered["default"], "HorizontalPodAutoscaler")) == len(SERVICES)
        # ... and ScaledObjects as soon as the cluster serves keda.sh/v1alpha1.
        docs = render_docs(helm, "--api-versions", "keda.sh/v1alpha1")
        assert {component(d) for d in of_kind(docs, "ScaledObject")} == set(CONSUMED)
        assert {component(d) for d in of_kind(docs, "HorizontalPodAutoscaler")} == {"upload"}


class TestSecrets:
    def test_chart_renders_no_secret_object_and_no_secret_value(
        self, rendered: dict[str, list[Doc]], rendered_dir: Path
    ) -> None:
        for name, docs in rendered.items():
            assert not of_kind(docs, "Secret"), name
            text = (rendered_dir / f"{name}.yaml").read_text()
            for sentinel in SENTINELS:
                assert sentinel not in text, f"{name}: secret value rendered in clear"
            for cm in of_kind(docs, "ConfigMap"):
                assert not SECRET_ENV & set(cm.get("data") or {}), cm["metadata"]["name"]
            for owner, spec in pod_specs(docs):
                for c in spec["containers"]:
                    for env in c.get("env", []):
                        if env["name"] in SECRET_ENV:
                            assert "value" not in env, (
                                name,
                                owner["metadata"]["name"],
                                env["name"],
                            )
                            assert "secretKeyRef" in env["valueFrom"]

    def test_secret_env_comes_from_existing_secret_references(
        self, rendered: dict[str, list[Doc]]
    ) -> None:
        docs = rendered["hpa"]  # static S3 keys from docproc-s3
        refs = {}
        for dep in of_kind(docs, "Deployment"):
            (c,) = dep["spec"]["template"]["spec"]["containers"]
            refs[component(dep)] = {
                e["name"]: (
                    e["valueFrom"]["secretKeyRef"]["name"],
                    e["valueFrom"]["secretKeyRef"]["key"],
                )
                for e in c["env"]
                if "valueFrom" in e
            }
        assert refs["upload"]["AUTH__JWT_SECRET"] == ("docproc-auth", "jwt-secret")
        assert refs["upload"]["VAULT__MASTER_KEY"] == ("docproc-vault", "master-key")
        assert refs["embedder"]["AWS_SECRET_ACCESS_KEY"] == ("docproc-s3", "secret-access-key")
        for svc in SERVICES:
            assert refs[svc]["DATABASE__URL"] == ("docproc-database", "url")
        assert "AUTH__JWT_SECRET" not in refs["parser"], "only upload verifies tokens"
        # IRSA set (keda): no static AWS keys at all
        for dep in of_kind(rendered["keda"], "Deployment"):
            names = {e["name"] for e in dep["spec"]["template"]["spec"]["containers"][0]["env"]}
            assert "AWS_SECRET_ACCESS_KEY" not in names

    @pytest.mark.parametrize(
        "values",
        [
            {
                "common": {
                    "env": {"DATABASE__URL": "postgresql+asyncpg://u:s3ntinel-db-password@db/x"}
                }
            },
            {"services": {"upload": {"env": {"AUTH__JWT_SECRET": "s3ntinel-jwt-secret"}}}},
            {"services": {"embedder": {"env": {"VAULT__MASTER_KEY": "s3ntinel-vault-key"}}}},
            {"services": {"parser": {"env": {"AWS_SECRET_ACCESS_KEY": "s3ntinel-aws-secret"}}}},
            {"secrets": {"database": {"url": "postgresql+asyncpg://u:s3ntinel-db-password@db/x"}}},
            {"secrets": {"jwt": {"value": "s3ntinel-jwt-secret"}}},
            {"secrets": {"vault": {"masterKey": "s3ntinel-vault-key"}}},
            {"secrets": {"s3": {"secretAccessKey": "s3ntinel-aws-secret"}}},
        ],
        ids=["common.env", "upload.env", "embedder.env", "parser.env", "db", "jwt", "vault", "s3"],
    )
    def test_schema_refuses_secret_values_in_values(
        self, helm: Path, tmp_path: Path, values: dict[str, Any]
    ) -> None:
        result = render(helm, values=values, tmp=tmp_path)
        assert result.returncode != 0, "a secret value was accepted in values"
        assert "schema" in result.stderr
        assert not any(s in result.stdout for s in SENTINELS)


NAMESPACE_LABEL = "kubernetes.io/metadata.name"


class TestNetworkPolicy:
    def test_off_by_default(self, rendered: dict[str, list[Doc]]) -> None:
        for name in ("default", "keda", "hpa", "pvc", "dev"):
            assert not of_kind(rendered[name], "NetworkPolicy"), name

    def test_policy_per_service_plus_jobs(self, rendered: dict[str, list[Doc]]) -> None:
        docs = rendered["networkpolicy"]
        policies = by_name(docs, "NetworkPolicy")
        deployments = by_name(docs, "Deployment")
        for name, dep in deployments.items():
            np = policies[name]
            assert (
                np["spec"]["podSelector"]["matchLabels"] == dep["spec"]["selector"]["matchLabels"]
            )
            assert np["spec"]["policyTypes"] == ["Ingress", "Egress"]
            # the gateway reaches the API port of the components that serve one, and only
            # that; the scraper reaches the metrics port, and only that
            rules = [
                ({p["port"] for p in rule["ports"]}, rule["from"]) for rule in np["spec"]["ingress"]
            ]
            gateway = [{"namespaceSelector": {"matchLabels": {NAMESPACE_LABEL: "gateway"}}}]
            monitoring = [{"namespaceSelector": {"matchLabels": {NAMESPACE_LABEL: "monitoring"}}}]
            api = [({"http"}, gateway)] if component(dep) == "upload" else []
            assert rules == [*api, ({"metrics"}, monitoring)], name
            dns = np["spec"]["egress"][0]
            assert {p["port"] for p in dns["ports"]} == {53}
            assert len(np["spec"]["egress"]) == 4
        jobs = policies["docproc-jobs"]
        selected = {
            v
            for e in jobs["spec"]["podSelector"]["matchExpressions"]
            if e["key"].endswith("component")
            for v in e["values"]
        }
        assert selected == {"migrate", "topics"}
        assert jobs["spec"]["egress"] == policies["docproc-parser"]["spec"]["egress"]

    def test_egress_stays_open_without_rules(self, helm: Path) -> None:
        docs = render_docs(helm, "--set", "networkPolicy.enabled=true")
        for np in of_kind(docs, "NetworkPolicy"):
            assert np["spec"]["policyTypes"] == ["Ingress"]
            assert "egress" not in np["spec"]


class TestMonitoring:
    def test_monitoring_crds_off_by_default(self, rendered: dict[str, list[Doc]]) -> None:
        for kind in ("ServiceMonitor", "PrometheusRule"):
            assert not of_kind(rendered["default"], kind)

    def test_servicemonitor_scrapes_http_metrics_of_each_service(
        self, rendered: dict[str, list[Doc]]
    ) -> None:
        docs = rendered["keda"]
        services = by_name(docs, "Service")
        monitors = by_name(docs, "ServiceMonitor")
        assert set(monitors) == set(services)
        for name, sm in monitors.items():
            assert sm["apiVersion"] == "monitoring.coreos.com/v1"
            assert sm["metadata"]["labels"]["release"] == "kube-prometheus-stack"
            svc_labels = services[name]["metadata"]["labels"]
            assert sm["spec"]["selector"]["matchLabels"].items() <= svc_labels.items()
            assert sm["spec"]["namespaceSelector"] == {"matchNames": ["docproc"]}
            (ep,) = sm["spec"]["endpoints"]
            assert ep["port"] == "http-metrics"
            assert ep["path"] == "/metrics"
            assert "http-metrics" in {p["name"] for p in services[name]["spec"]["ports"]}

    def test_prometheusrule_alerts_link_their_runbooks(
        self, rendered: dict[str, list[Doc]]
    ) -> None:
        (rule,) = of_kind(rendered["keda"], "PrometheusRule")
        assert rule["apiVersion"] == "monitoring.coreos.com/v1"
        anchors = github_anchors(OPERATIONS.read_text())
        alerts = [r for g in rule["spec"]["groups"] for r in g["rules"] if "alert" in r]
        assert {a["alert"] for a in alerts} == EXPECTED_ALERTS
        for alert in alerts:
            url = alert["annotations"]["runbook_url"]
            base, _, anchor = url.partition("#")
            assert base.endswith("docs/operations.md"), url
            assert anchor == alert["alert"].lower(), url
            assert anchor in anchors, f"docs/operations.md has no section #{anchor}"
            assert alert["labels"]["severity"] in {"warning", "critical"}
            assert alert["annotations"]["summary"]
            assert alert["annotations"]["description"]
            for metric in promql_metrics(alert["expr"]):
                assert is_allowed_metric(metric), f"{alert['alert']}: unknown metric {metric}"

    def test_dlq_and_lag_alerts_cover_every_consumer(self, rendered: dict[str, list[Doc]]) -> None:
        (rule,) = of_kind(rendered["keda"], "PrometheusRule")
        alerts = [r for g in rule["spec"]["groups"] for r in g["rules"]]
        for name in ("DocprocDLQGrowing", "DocprocConsumerLagNotDraining"):
            assert {a["labels"]["service"] for a in alerts if a["alert"] == name} == set(CONSUMED)

    def test_dashboard_json_is_valid_and_names_only_known_metrics(self) -> None:
        dashboard = json.loads((CHART / "dashboards" / "pipeline.json").read_text())
        assert dashboard["uid"]
        assert dashboard["title"]
        assert isinstance(dashboard["schemaVersion"], int)
        panels = dashboard["panels"]
        ids = [p["id"] for p in panels]
        assert len(ids) == len(set(ids)), "panel ids must be unique"
        exprs = []
        for p in panels:
            assert {"h", "w", "x", "y"} <= set(p["gridPos"])
            assert p["gridPos"]["x"] + p["gridPos"]["w"] <= 24
            if p["type"] == "row":
                continue
            assert p["targets"], p["title"]
            for t in p["targets"]:
                exprs.append(t["expr"])
        named: set[str] = set()
        for expr in exprs:
            metrics = promql_metrics(expr)
            assert metrics, f"no metric in {expr}"
            for metric in metrics:
                assert is_allowed_metric(metric), f"dashboard names unknown metric {metric}"
            named |= metrics
        # pipeline overview: throughput per stage, lag, error rates, stuck documents, DLQ
        joined = "\n".join(exprs)
        for needle in (
            "docproc_parser_documents_total",
            "docproc_embedder_documents_total",
            "docproc_parser_consumer_lag",
            "docproc_embedder_provider_errors_total",
            "docproc_upload_documents_stuck",
            'outcome="dlq"',
            "docproc_teardown_reservation_oldest_age_seconds",
            "docproc_retrieval_ndcg_at_10",
        ):
            assert needle in joined, needle
        for var in dashboard["templating"]["list"]:
            if var["type"] == "query":
                for metric in promql_metrics(
                    re.sub(r"label_values\((\w+),.*\)", r"\1", var["definition"])
                ):
                    assert is_allowed_metric(metric)

    def test_dashboard_configmap_ships_the_json(self, rendered: dict[str, list[Doc]]) -> None:
        cm = by_name(rendered["default"], "ConfigMap")["docproc-dashboard"]
        assert cm["metadata"]["labels"]["grafana_dashboard"] == "1"
        shipped = json.loads(cm["data"]["docproc-pipeline.json"])
        assert shipped == json.loads((CHART / "dashboards" / "pipeline.json").read_text())
        assert by_name(rendered["keda"], "ConfigMap")["docproc-dashboard"]["metadata"][
            "annotations"
        ] == {"grafana_folder": "docproc"}


class TestPromqlParser:
    def test_extracts_metric_names_only(self) -> None:
        expr = (
            "histogram_quantile(0.95, sum by (le, stage) (rate(docproc_parser_stage_seconds_bucket"
            '{namespace=~"$namespace", stage!="x"}[$__rate_interval]))) / clamp_min(sum('
            "docproc_parser_documents_total), 1e-9) and on (topic) vector(0)"
        )
        assert promql_metrics(expr) == {
            "docproc_parser_stage_seconds_bucket",
            "docproc_parser_documents_total",
        }


class TestValuesDocumentation:
    def test_every_value_has_a_helm_docs_comment(self) -> None:
        """Each leaf key in values.yaml (or an ancestor) carries a `# --` comment."""
        lines = (CHART / "values.yaml").read_text().splitlines()
        key_re = re.compile(r"^(\s*)([A-Za-z0-9_.\-]+):(.*)$")
        stack: list[tuple[int, bool]] = []  # (indent, documented)
        undocumented = []
        for i, line in enumerate(lines):
            m = key_re.match(line)
            if not m or line.lstrip().startswith("#"):
                continue
            indent, key, rest = len(m.group(1)), m.group(2), m.group(3).strip()
            while stack and stack[-1][0] >= indent:
                stack.pop()
            prev = next((p.strip() for p in reversed(lines[:i]) if p.strip()), "")
            documented = prev.startswith("# --")
            inherited = any(doc for _, doc in stack)
            following = next(
                (n for n in lines[i + 1 :] if n.strip() and not n.strip().startswith("#")), ""
            )
            nxt = key_re.match(following)
            is_parent = rest == "" and nxt is not None and len(nxt.group(1)) > indent
            if not is_parent and not documented and not inherited:
                undocumented.append(f"line {i + 1}: {key}")
            stack.append((indent, documented))
        assert not undocumented, undocumented
