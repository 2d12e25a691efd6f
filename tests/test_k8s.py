"""deploy/k8s: valid against Kubernetes' schemas (kubernetes-validate), and wired as docs/deploy.md says."""

from pathlib import Path

import kubernetes_validate
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
K8S = ROOT / "deploy" / "k8s"
VERSION = "1.37.0"  # the newest schemas kubernetes-validate 1.37 ships


def resources(name: str) -> list[dict]:
    return [doc for doc in yaml.safe_load_all((K8S / name).read_text()) if doc]


def by_kind() -> dict[str, list[dict]]:
    kinds: dict[str, list[dict]] = {}
    for path in sorted(K8S.glob("*.yaml")):
        for doc in resources(path.name):
            kinds.setdefault(doc["kind"], []).append(doc)
    return kinds


MANIFESTS = sorted(p.name for p in K8S.glob("*.yaml") if p.name != "kustomization.yaml")


@pytest.mark.parametrize("name", MANIFESTS)
def test_every_manifest_is_valid_kubernetes(name):
    docs = resources(name)
    assert docs
    for doc in docs:
        # strict: an unknown or misspelt field is an error, not silently ignored by the cluster
        kubernetes_validate.validate(doc, VERSION, strict=True)


def test_the_validator_rejects_a_misspelt_field():
    (deployment,) = resources("deployment.yaml")
    deployment["spec"]["template"]["spec"]["containers"][0]["readinessProbe"]["httpGett"] = {"path": "/"}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(deployment, VERSION, strict=True)


def test_kustomization_applies_every_manifest_but_the_secret_example():
    (kustomization,) = resources("kustomization.yaml")
    assert sorted(kustomization["resources"]) == sorted(n for n in MANIFESTS if n != "secret.example.yaml")


def test_the_deployment_is_sized_probed_and_shares_the_cookie_secret():
    (deployment,) = by_kind()["Deployment"]
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    for kind in ("requests", "limits"):
        assert {"cpu", "memory"} <= set(container["resources"][kind]), kind
    for probe in ("readinessProbe", "startupProbe", "livenessProbe"):
        assert container[probe]["httpGet"]["path"] == "/_stcore/health", probe
    (secret_env,) = [e for e in container["env"] if e["name"] == "STREAMLIT_SERVER_COOKIE_SECRET"]
    ref = secret_env["valueFrom"]["secretKeyRef"]
    (example,) = by_kind()["Secret"]
    assert ref["name"] == example["metadata"]["name"] and ref["key"] in example["stringData"]
    assert deployment["spec"]["template"]["spec"]["securityContext"]["runAsUser"] == 1000  # the Dockerfile's user


def test_service_ingress_and_autoscaler_point_at_the_app():
    kinds = by_kind()
    (deployment,), (service,), (hpa,) = kinds["Deployment"], kinds["Service"], kinds["HorizontalPodAutoscaler"]
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= labels.items()
    assert "sessionAffinity" not in service["spec"], "ClientIP affinity puts a class behind one NAT on one pod"
    assert hpa["spec"]["scaleTargetRef"]["name"] == deployment["metadata"]["name"]
    assert [m["resource"]["name"] for m in hpa["spec"]["metrics"]] == ["cpu"]
    assert hpa["spec"]["minReplicas"] >= 2

    app, metrics = sorted(kinds["Ingress"], key=lambda i: i["metadata"]["name"])
    notes = app["metadata"]["annotations"]
    assert notes["nginx.ingress.kubernetes.io/affinity"] == "cookie"
    assert notes["nginx.ingress.kubernetes.io/session-cookie-name"]
    assert int(notes["nginx.ingress.kubernetes.io/proxy-read-timeout"]) >= 3600  # websockets stay open
    backends = [p["backend"]["service"]["name"] for r in app["spec"]["rules"] for p in r["http"]["paths"]]
    assert backends == [service["metadata"]["name"]]
    (closed,) = [p for r in metrics["spec"]["rules"] for p in r["http"]["paths"]]
    assert closed["path"] == "/_stcore/metrics" and closed["pathType"] == "Exact"
    assert metrics["metadata"]["annotations"]["nginx.ingress.kubernetes.io/denylist-source-range"] == "0.0.0.0/0,::/0"
