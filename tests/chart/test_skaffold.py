"""skaffold.yaml kept valid without skaffold or a cluster: structure checked with PyYAML.

The allowed keys below are the ones of the skaffold/v4beta13 schema for the
objects this file uses (Config, build, artifact, docker, local, helm release,
profile, portForward); an unknown or misspelt key fails here as skaffold would.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
SKAFFOLD = ROOT / "skaffold.yaml"
CHART = ROOT / "deploy" / "helm" / "docproc"
SERVICES = ("upload", "parser", "embedder", "sync", "teardown")

CONFIG_KEYS = {
    "apiVersion", "kind", "metadata", "requires", "build", "test", "manifests",
    "deploy", "portForward", "resourceSelector", "verify", "customActions", "profiles",
}  # fmt: skip
BUILD_KEYS = {
    "artifacts",
    "insecureRegistries",
    "tagPolicy",
    "platforms",
    "local",
    "googleCloudBuild",
    "cluster",
}
ARTIFACT_KEYS = {
    "image",
    "context",
    "sync",
    "requires",
    "hooks",
    "platforms",
    "runtimeType",
    "docker",
}
DOCKER_KEYS = {
    "dockerfile", "target", "buildArgs", "network", "addHost", "cacheFrom", "cliFlags",
    "pullParent", "noCache", "cacheTo", "squash", "secrets", "ssh",
}  # fmt: skip
LOCAL_KEYS = {"push", "tryImportMissing", "useDockerCLI", "useBuildkit", "concurrency"}
GIT_VARIANTS = {"Tags", "CommitSha", "AbbrevCommitSha", "TreeSha", "AbbrevTreeSha"}
HELM_DEPLOY_KEYS = {"concurrency", "releases", "flags", "hooks"}
RELEASE_KEYS = {
    "name", "chartPath", "remoteChart", "valuesFiles", "namespace", "version", "setValues",
    "setValueTemplates", "setFiles", "createNamespace", "wait", "recreatePods",
    "skipBuildDependencies", "skipTests", "useHelmSecrets", "repo", "upgradeOnChange",
    "overrides", "packaged", "dependsOn",
}  # fmt: skip
PROFILE_KEYS = {
    "name", "activation", "requiresAllActivations", "patches", "build", "test", "manifests",
    "deploy", "portForward", "resourceSelector", "verify", "customActions",
}  # fmt: skip
ACTIVATION_KEYS = {"env", "kubeContext", "command"}
PORT_FORWARD_KEYS = {"resourceType", "resourceName", "namespace", "port", "address", "localPort"}


@pytest.fixture(scope="module")
def config() -> dict[str, Any]:
    docs = list(yaml.safe_load_all(SKAFFOLD.read_text()))
    assert len(docs) == 1, "one config document (a deps config would come through requires:)"
    doc = docs[0]
    assert isinstance(doc, dict)
    return doc


def releases(section: dict[str, Any]) -> list[dict[str, Any]]:
    deploy = section["deploy"]
    assert set(deploy) == {"helm"}, "deploy with `helm install` so the chart hooks run"
    assert set(deploy["helm"]) <= HELM_DEPLOY_KEYS
    rels = deploy["helm"]["releases"]
    assert isinstance(rels, list)
    return rels


def values_path_exists(values: dict[str, Any], dotted: str) -> bool:
    node: Any = values
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True


def check_build(build: dict[str, Any]) -> None:
    assert set(build) <= BUILD_KEYS
    assert set(build["tagPolicy"]) == {"gitCommit"}
    assert build["tagPolicy"]["gitCommit"].get("variant", "Tags") in GIT_VARIANTS
    assert set(build.get("local", {})) <= LOCAL_KEYS
    artifacts = build["artifacts"]
    assert [a["image"] for a in artifacts] == [f"docproc-{s}" for s in SERVICES]
    for art, svc in zip(artifacts, SERVICES, strict=True):
        assert set(art) <= ARTIFACT_KEYS
        assert art["context"] == ".", "the lock lives at the root"
        assert set(art["docker"]) <= DOCKER_KEYS
        dockerfile = art["docker"]["dockerfile"]
        assert dockerfile == "Dockerfile", "one Dockerfile for every service"
        assert art["docker"]["buildArgs"] == {"SERVICE": svc}
        assert (ROOT / dockerfile).is_file()


def check_release(release: dict[str, Any], images: list[str]) -> None:
    assert set(release) <= RELEASE_KEYS
    assert release["name"] == "docproc"
    assert (ROOT / release["chartPath"] / "Chart.yaml").is_file()
    for path in release.get("valuesFiles", []):
        assert (ROOT / path).is_file(), path
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    templates = release["setValueTemplates"]
    # skaffold exposes IMAGE_REPO_/IMAGE_TAG_/IMAGE_DIGEST_<image> with - and / as _
    variables = {re.sub(r"[-/]", "_", image) for image in images}
    for svc in SERVICES:
        var = f"docproc_{svc}"
        assert templates[f"services.{svc}.image.repository"] == f"{{{{.IMAGE_REPO_{var}}}}}"
        assert templates[f"services.{svc}.image.tag"] == (
            f"{{{{.IMAGE_TAG_{var}}}}}@{{{{.IMAGE_DIGEST_{var}}}}}"
        )
    assert templates["jobs.image.repository"] == "{{.IMAGE_REPO_docproc_upload}}"
    for key, template in templates.items():
        assert values_path_exists(values, key), f"{key} is not a chart value"
        for ref in re.findall(r"\{\{\s*\.IMAGE_(?:REPO|TAG|DIGEST)_(\w+)\s*\}\}", template):
            assert ref in variables, f"{key}: no artifact named like {ref}"


class TestSkaffold:
    def test_config_header(self, config: dict[str, Any]) -> None:
        assert config["apiVersion"] == "skaffold/v4beta13"
        assert config["kind"] == "Config"
        assert config["metadata"]["name"] == "docproc"
        assert set(config) <= CONFIG_KEYS

    def test_one_artifact_per_service(self, config: dict[str, Any]) -> None:
        check_build(config["build"])

    def test_release_sets_each_image(self, config: dict[str, Any]) -> None:
        images = [a["image"] for a in config["build"]["artifacts"]]
        (release,) = releases(config)
        check_release(release, images)

    def test_port_forward_targets_the_upload_service(self, config: dict[str, Any]) -> None:
        (pf,) = config["portForward"]
        assert set(pf) <= PORT_FORWARD_KEYS
        assert pf["resourceType"] == "service"
        assert pf["resourceName"] == "docproc-upload"

    def test_dev_and_prod_profiles_replace_whole_sections(self, config: dict[str, Any]) -> None:
        images = [a["image"] for a in config["build"]["artifacts"]]
        profiles = {p["name"]: p for p in config["profiles"]}
        assert set(profiles) == {"dev", "prod"}
        for name, profile in profiles.items():
            assert set(profile) <= PROFILE_KEYS
            assert "patches" not in profile, "no JSON patches by list index"
            for activation in profile.get("activation", []):
                assert set(activation) <= ACTIVATION_KEYS
            (release,) = releases(profile)
            check_release(release, images)
            assert release["valuesFiles"] == [f"deploy/helm/values-{name}.yaml"]
            if "build" in profile:
                check_build(profile["build"])
        assert profiles["prod"]["build"]["local"]["push"] is True

    def test_profile_values_files_are_rendered_by_the_chart_checks(self) -> None:
        script = (ROOT / "scripts" / "helm.sh").read_text()
        assert "deploy/helm/values-*.yaml" in script
        for name in ("dev", "prod"):
            values = yaml.safe_load((ROOT / "deploy" / "helm" / f"values-{name}.yaml").read_text())
            assert values["common"]["environment"] == name
