"""deploy/k8s: valid against Kubernetes' schemas (kubernetes-validate), Pod Security "restricted", and wired as
docs/deploy.md says."""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

import kubernetes_validate
import pytest
import yaml

from harness.nginx import deploy_block

ROOT = Path(__file__).resolve().parents[1]
K8S = ROOT / "deploy" / "k8s"
VERSION = "1.37.0"  # the newest schemas kubernetes-validate 1.37 ships
PEAK_MIB = 1536  # issue 20: a replica stays at or under 1.5 GiB whatever visitors do
HEADROOM = 1.5  # the limit is at least this much above that peak: allocator slack, torch temporaries
CLASS = 200  # the ingress limits let a class this size through from one address


def resources(name: str) -> list[dict]:
    return [doc for doc in yaml.safe_load_all((K8S / name).read_text()) if doc]


def by_kind() -> dict[str, list[dict]]:
    kinds: dict[str, list[dict]] = {}
    for path in sorted(K8S.glob("*.yaml")):
        for doc in resources(path.name):
            kinds.setdefault(doc["kind"], []).append(doc)
    return kinds


def named(kind: str, name: str) -> dict:
    (doc,) = [d for d in by_kind()[kind] if d["metadata"]["name"] == name]
    return doc


def deployment() -> dict:
    """The app's Deployment."""
    return named("Deployment", "lnviz")


def redis_deployment() -> dict:
    """The class page's Redis (redis.yaml)."""
    return named("Deployment", "lnviz-redis")


def ingresses() -> dict[str, dict]:
    return {i["metadata"]["name"]: i for i in by_kind()["Ingress"]}


def mebibytes(quantity: str) -> float:
    number, unit = re.fullmatch(r"(\d+(?:\.\d+)?)(Mi|Gi)", quantity).groups()
    return float(number) * (1024 if unit == "Gi" else 1)


MANIFESTS = sorted(p.name for p in K8S.glob("*.yaml") if p.name != "kustomization.yaml")


@pytest.mark.parametrize("name", MANIFESTS)
def test_every_manifest_is_valid_kubernetes(name):
    docs = resources(name)
    assert docs
    for doc in docs:
        # strict: an unknown or misspelt field is an error, not silently ignored by the cluster
        kubernetes_validate.validate(doc, VERSION, strict=True)


def test_the_validator_rejects_a_misspelt_field():
    d = deployment()
    d["spec"]["template"]["spec"]["containers"][0]["livenessProbe"]["httpGett"] = {"path": "/"}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(d, VERSION, strict=True)


def test_kustomization_applies_every_manifest():
    (kustomization,) = resources("kustomization.yaml")
    assert sorted(kustomization["resources"]) == MANIFESTS


# Pod Security Standards, "restricted" (kubernetes.io/docs/concepts/security/pod-security-standards), as the
# admission controller checks a pod; and two rules of ours beyond it.
RESTRICTED_VOLUMES = {"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim"}
RESTRICTED_VOLUMES |= {"projected", "secret"}


def restricted_violations(pod: dict) -> list[str]:
    """What in a pod spec Pod Security "restricted" refuses, and what our own two rules refuse."""
    bad = []
    pod_sc = pod.get("securityContext", {})
    for host in ("hostNetwork", "hostPID", "hostIPC"):
        if pod.get(host):
            bad.append(host)
    for volume in pod.get("volumes", []):
        if not set(volume) - {"name"} <= RESTRICTED_VOLUMES:
            bad.append(f"volume {volume['name']}: {sorted(set(volume) - {'name'})}")
    if pod_sc.get("runAsUser") == 0:
        bad.append("pod runAsUser 0")
    for c in pod["containers"] + pod.get("initContainers", []):
        sc, name = c.get("securityContext", {}), c["name"]
        if sc.get("privileged"):
            bad.append(f"{name}: privileged")
        if sc.get("allowPrivilegeEscalation") is not False:
            bad.append(f"{name}: allowPrivilegeEscalation must be false")
        if not sc.get("runAsNonRoot", pod_sc.get("runAsNonRoot")):
            bad.append(f"{name}: runAsNonRoot must be true")
        if sc.get("runAsUser") == 0:
            bad.append(f"{name}: runAsUser 0")
        seccomp = sc.get("seccompProfile", pod_sc.get("seccompProfile", {})).get("type")
        if seccomp not in ("RuntimeDefault", "Localhost"):
            bad.append(f"{name}: seccompProfile must be RuntimeDefault or Localhost, is {seccomp}")
        caps = sc.get("capabilities", {})
        if "ALL" not in caps.get("drop", []):
            bad.append(f"{name}: capabilities must drop ALL")
        if set(caps.get("add", [])) - {"NET_BIND_SERVICE"}:
            bad.append(f"{name}: adds capabilities {caps['add']}")
        if any(p.get("hostPort") for p in c.get("ports", [])):
            bad.append(f"{name}: hostPort")
        # ours: nothing in the image can be changed, and no API token to steal
        if sc.get("readOnlyRootFilesystem") is not True:
            bad.append(f"{name}: readOnlyRootFilesystem must be true")
    if pod.get("automountServiceAccountToken") is not False:
        bad.append("automountServiceAccountToken must be false")
    return bad


def pod_spec() -> dict:
    return deployment()["spec"]["template"]["spec"]


def redis_pod_spec() -> dict:
    return redis_deployment()["spec"]["template"]["spec"]


def test_every_deployment_is_checked():
    assert sorted(d["metadata"]["name"] for d in by_kind()["Deployment"]) == ["lnviz", "lnviz-redis"]


@pytest.mark.parametrize("pod", [pod_spec, redis_pod_spec], ids=["app", "redis"])
def test_the_pod_passes_pod_security_restricted(pod):
    assert restricted_violations(pod()) == []


def _container(pod: dict) -> dict:
    return pod["containers"][0]


def _drop(path: Callable[[dict], dict], key: str) -> Callable[[dict], None]:
    return lambda pod: path(pod).pop(key)


# Each field the pod needs to pass, and how to take it away: the check must then fail.
REMOVALS = {
    "runAsNonRoot": lambda pod: (
        pod["securityContext"].pop("runAsNonRoot"),
        _container(pod)["securityContext"].pop("runAsNonRoot"),
    ),
    "allowPrivilegeEscalation": _drop(lambda pod: _container(pod)["securityContext"], "allowPrivilegeEscalation"),
    "capabilities.drop": _drop(lambda pod: _container(pod)["securityContext"]["capabilities"], "drop"),
    "readOnlyRootFilesystem": _drop(lambda pod: _container(pod)["securityContext"], "readOnlyRootFilesystem"),
    "seccompProfile": lambda pod: (
        pod["securityContext"].pop("seccompProfile"),
        _container(pod)["securityContext"].pop("seccompProfile"),
    ),
    "automountServiceAccountToken": _drop(lambda pod: pod, "automountServiceAccountToken"),
}


@pytest.mark.parametrize("field", sorted(REMOVALS))
@pytest.mark.parametrize("spec", [pod_spec, redis_pod_spec], ids=["app", "redis"])
def test_without_each_field_the_pod_fails_the_check(spec, field):
    pod = copy.deepcopy(spec())
    REMOVALS[field](pod)
    assert restricted_violations(pod), field


@pytest.mark.parametrize(
    "worse",
    [
        {"hostNetwork": True},
        {"volumes": [{"name": "root", "hostPath": {"path": "/"}}]},
        {"containers": [{"name": "x", "securityContext": {"privileged": True}}]},
    ],
)
def test_the_check_refuses_what_restricted_refuses(worse):
    pod = copy.deepcopy(pod_spec())
    if "containers" in worse:
        _container(pod)["securityContext"].update(worse["containers"][0]["securityContext"])
    else:
        pod.update(worse)
    assert restricted_violations(pod)


def test_the_read_only_root_has_writable_tmp_and_home():
    pod = pod_spec()
    mounts = {m["mountPath"]: m["name"] for m in _container(pod)["volumeMounts"]}
    volumes = {v["name"]: v for v in pod["volumes"]}
    env = {e["name"]: e.get("value") for e in _container(pod)["env"]}
    for path in ("/tmp", env["HOME"]):
        assert path in mounts, path
        assert "emptyDir" in volumes[mounts[path]], path
        assert volumes[mounts[path]]["emptyDir"]["sizeLimit"], "an uncapped emptyDir can fill the node's disk"
    assert env["HOME"] == "/home/app"  # the Dockerfile's user's home


def test_the_memory_limit_leaves_headroom_above_a_replicas_peak():
    resources_ = _container(pod_spec())["resources"]
    assert mebibytes(resources_["requests"]["memory"]) >= PEAK_MIB  # the scheduler reserves what it reaches
    assert mebibytes(resources_["limits"]["memory"]) >= PEAK_MIB * HEADROOM
    assert {"cpu", "memory"} <= set(resources_["limits"])


def test_readiness_measures_a_first_view_and_liveness_only_that_the_server_answers():
    c = _container(pod_spec())
    ready, alive, started = c["readinessProbe"], c["livenessProbe"], c["startupProbe"]
    command = ready["exec"]["command"]
    assert command[:2] == ["python", "deploy/ready.py"] and (ROOT / command[1]).is_file()
    within = float(command[command.index("--within") + 1])
    assert within < ready["timeoutSeconds"], "the kubelet must not cut the probe off before it answers"
    assert started["exec"]["command"][:2] == command[:2]
    assert started["timeoutSeconds"] > float(started["exec"]["command"][-1])
    assert alive["httpGet"]["path"] == "/_stcore/health"  # a restart ends every session: only when it is gone
    assert alive["failureThreshold"] * alive["periodSeconds"] >= 60


def test_the_image_is_pinned():
    image = _container(pod_spec())["image"]
    name, _, tag = image.rpartition(":")
    assert "@sha256:" in image or (name and tag and tag != "latest" and re.fullmatch(r"v?\d+\.\d+\.\d+", tag)), image


def test_pods_spread_over_nodes():
    spread = pod_spec()["topologySpreadConstraints"]
    labels = deployment()["spec"]["template"]["metadata"]["labels"]
    (nodes,) = [s for s in spread if s["topologyKey"] == "kubernetes.io/hostname"]
    assert nodes["whenUnsatisfiable"] == "DoNotSchedule" and nodes["maxSkew"] == 1
    assert nodes["labelSelector"]["matchLabels"].items() <= labels.items()


def test_a_rollout_is_graceful():
    d = deployment()
    pod = d["spec"]["template"]["spec"]
    pause = int(_container(pod)["lifecycle"]["preStop"]["exec"]["command"][-1])
    assert pause >= 5  # the ingress drops the pod from its endpoints before Streamlit stops
    assert pod["terminationGracePeriodSeconds"] >= pause + 15  # and Streamlit has time to close its sessions
    assert d["spec"]["strategy"]["rollingUpdate"]["maxUnavailable"] == 0


def pod_labels(d: dict) -> dict:
    return d["spec"]["template"]["metadata"]["labels"]


def test_only_the_ingress_controller_reaches_the_pods_and_they_reach_only_dns_and_redis():
    policy = named("NetworkPolicy", "lnviz")
    labels = pod_labels(deployment())
    assert policy["spec"]["podSelector"]["matchLabels"].items() <= labels.items()
    assert sorted(policy["spec"]["policyTypes"]) == ["Egress", "Ingress"]
    dns, to_redis = policy["spec"]["egress"]
    (kube_dns,) = dns["to"]
    assert kube_dns["namespaceSelector"]["matchLabels"] == {"kubernetes.io/metadata.name": "kube-system"}
    assert kube_dns["podSelector"]["matchLabels"] == {"k8s-app": "kube-dns"}
    assert sorted((p["protocol"], p["port"]) for p in dns["ports"]) == [("TCP", 53), ("UDP", 53)]
    (target,) = to_redis["to"]
    assert set(target) == {"podSelector"}  # this namespace's Redis pods, nothing else
    assert target["podSelector"]["matchLabels"].items() <= pod_labels(redis_deployment()).items()
    assert [(p["protocol"], p["port"]) for p in to_redis["ports"]] == [("TCP", redis_port())]
    (rule,) = policy["spec"]["ingress"]
    (source,) = rule["from"]
    assert source["namespaceSelector"]["matchLabels"] == {"kubernetes.io/metadata.name": "ingress-nginx"}
    assert [p["port"] for p in rule["ports"]] == ["http"]


def test_service_and_autoscaler_point_at_the_app():
    kinds = by_kind()
    service, (hpa,) = named("Service", "lnviz"), kinds["HorizontalPodAutoscaler"]
    labels = deployment()["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= labels.items()
    assert "sessionAffinity" not in service["spec"], "ClientIP affinity puts a class behind one NAT on one pod"
    assert hpa["spec"]["scaleTargetRef"]["name"] == deployment()["metadata"]["name"]
    assert sorted(m["resource"]["name"] for m in hpa["spec"]["metrics"]) == ["cpu", "memory"]
    assert hpa["spec"]["minReplicas"] >= 2


def test_every_ingress_is_tls_only_with_a_secure_affinity_cookie():
    for name, ingress in ingresses().items():
        notes = ingress["metadata"]["annotations"]
        hosts = {r["host"] for r in ingress["spec"]["rules"]}
        assert hosts <= {h for t in ingress["spec"]["tls"] for h in t["hosts"]}, name
        assert notes["nginx.ingress.kubernetes.io/force-ssl-redirect"] == "true", name
        if notes.get("nginx.ingress.kubernetes.io/affinity") == "cookie":
            assert notes["nginx.ingress.kubernetes.io/session-cookie-secure"] == "true", name
            assert notes["nginx.ingress.kubernetes.io/session-cookie-name"] == "lnviz_route", name


def test_the_ingresses_route_to_the_app_and_close_the_metrics():
    service = named("Service", "lnviz")
    app, static, metrics = (ingresses()[n] for n in ("lnviz", "lnviz-static", "lnviz-metrics-closed"))
    notes = app["metadata"]["annotations"]
    assert notes["nginx.ingress.kubernetes.io/affinity"] == "cookie"
    assert int(notes["nginx.ingress.kubernetes.io/proxy-read-timeout"]) >= 3600  # websockets stay open
    for ingress, paths in ((app, ["/"]), (static, ["/static/", "/_stcore/bidi-components/"])):
        routes = [p for r in ingress["spec"]["rules"] for p in r["http"]["paths"]]
        assert [(route["path"], route["backend"]["service"]["name"]) for route in routes] == [
            (path, service["metadata"]["name"]) for path in paths
        ]
    (closed,) = [p for r in metrics["spec"]["rules"] for p in r["http"]["paths"]]
    assert closed["path"] == "/_stcore/metrics" and closed["pathType"] == "Exact"
    assert metrics["metadata"]["annotations"]["nginx.ingress.kubernetes.io/denylist-source-range"] == "0.0.0.0/0,::/0"


# A first load of the page, measured in Chromium (docs/deploy.md, "Limits per address"): 79 requests, 64 of
# them under /static/ and the stage's 9 files under /_stcore/bidi-components/. A class opens the link within
# this many seconds.
FIRST_LOAD_APP, FIRST_LOAD_STATIC, ARRIVAL_S = 6, 64 + 9, 10


def admitted(rps: int, multiplier: int, seconds: float) -> float:
    """What nginx's limit_req lets through in ``seconds`` from a standing start: the burst, then the rate."""
    return rps * multiplier + rps * seconds


def test_the_ingress_limits_let_a_nat_class_through_and_cap_one_address():
    for name, per_load in (("lnviz", FIRST_LOAD_APP), ("lnviz-static", FIRST_LOAD_STATIC)):
        notes = ingresses()[name]["metadata"]["annotations"]
        rps = int(notes["nginx.ingress.kubernetes.io/limit-rps"])
        multiplier = int(notes["nginx.ingress.kubernetes.io/limit-burst-multiplier"])
        assert admitted(rps, multiplier, ARRIVAL_S) >= CLASS * per_load, name
    app = ingresses()["lnviz"]["metadata"]["annotations"]
    connections = int(app["nginx.ingress.kubernetes.io/limit-connections"])
    assert CLASS < connections <= 2 * CLASS  # every tab's websocket, and not many more sessions than a class


def test_the_documented_nginx_block_has_the_ingress_limits():
    block = deploy_block()
    app = ingresses()["lnviz"]["metadata"]["annotations"]
    rps, multiplier = (
        int(app["nginx.ingress.kubernetes.io/limit-rps"]),
        int(app["nginx.ingress.kubernetes.io/limit-burst-multiplier"]),
    )
    assert re.search(rf"limit_req_zone \$binary_remote_addr zone=lnviz_app:\S+ rate={rps}r/s;", block)
    assert re.search(rf"limit_req zone=lnviz_app burst={rps * multiplier} nodelay;", block)
    assert f"limit_conn lnviz_addr {app['nginx.ingress.kubernetes.io/limit-connections']};" in block
    static = ingresses()["lnviz-static"]["metadata"]["annotations"]
    assert f"rate={static['nginx.ingress.kubernetes.io/limit-rps']}r/s;" in block


# The class page's Redis (redis.yaml): one shared store for every app pod, reached only by them.
REDIS_MAXMEMORY_MIB = 256


def redis_container() -> dict:
    return _container(redis_pod_spec())


def redis_port() -> int:
    (port,) = named("Service", "lnviz-redis")["spec"]["ports"]
    return port["port"]


def selects(selector: dict, labels: dict) -> bool:
    return selector.items() <= labels.items()


def test_the_app_finds_redis_by_the_services_name_and_port():
    env = {e["name"]: e.get("value") for e in _container(pod_spec())["env"]}
    url = urlsplit(env["LNVIZ_REDIS_URL"])
    service = named("Service", "lnviz-redis")
    assert url.scheme == "redis" and url.hostname == service["metadata"]["name"]
    assert url.port == redis_port() == 6379
    assert url.path == "/0"
    (port,) = service["spec"]["ports"]
    (container_port,) = redis_container()["ports"]
    assert port["targetPort"] in (container_port["name"], container_port["containerPort"])
    assert container_port["containerPort"] == 6379


def test_each_selector_picks_its_own_pods():
    app, redis = pod_labels(deployment()), pod_labels(redis_deployment())
    assert selects(named("Service", "lnviz-redis")["spec"]["selector"], redis)
    assert not selects(named("Service", "lnviz-redis")["spec"]["selector"], app)
    assert selects(redis_deployment()["spec"]["selector"]["matchLabels"], redis)
    # Nothing of the app's (its Service, budget, policy, rollout) takes Redis's pod for one of its own.
    (pdb,) = by_kind()["PodDisruptionBudget"]
    for selector in (
        named("Service", "lnviz")["spec"]["selector"],
        pdb["spec"]["selector"]["matchLabels"],
        named("NetworkPolicy", "lnviz")["spec"]["podSelector"]["matchLabels"],
        deployment()["spec"]["selector"]["matchLabels"],
    ):
        assert selects(selector, app) and not selects(selector, redis), selector


def test_only_the_app_pods_reach_redis_and_redis_reaches_nothing():
    policy = named("NetworkPolicy", "lnviz-redis")
    assert selects(policy["spec"]["podSelector"]["matchLabels"], pod_labels(redis_deployment()))
    assert sorted(policy["spec"]["policyTypes"]) == ["Egress", "Ingress"]
    assert policy["spec"]["egress"] == []
    (rule,) = policy["spec"]["ingress"]
    (source,) = rule["from"]
    assert set(source) == {"podSelector"}  # no namespaceSelector, no ipBlock: this namespace's app pods only
    assert source["podSelector"]["matchLabels"] == named("NetworkPolicy", "lnviz")["spec"]["podSelector"]["matchLabels"]
    assert selects(source["podSelector"]["matchLabels"], pod_labels(deployment()))
    assert [(p["protocol"], p["port"]) for p in rule["ports"]] == [("TCP", redis_port())]


def redis_args() -> dict[str, str]:
    args = redis_container()["args"]
    assert args[0] == "redis-server" and len(args) % 2 == 1
    return {flag.removeprefix("--"): value for flag, value in zip(args[1::2], args[2::2], strict=True)}


def test_redis_keeps_its_append_only_file_on_its_own_volume_and_evicts_nothing_within_its_limit():
    args = redis_args()
    assert args["save"] == "" and args["appendonly"] == "yes" and args["appendfsync"] == "everysec"
    (mount,) = [m for m in redis_container()["volumeMounts"] if m["mountPath"] == args["dir"]]
    (volume,) = [v for v in redis_pod_spec()["volumes"] if v["name"] == mount["name"]]
    # The file's data, as much again before a rewrite, and the rewrite's new base: a capped emptyDir that is too
    # small gets the pod evicted, the class with it.
    assert mebibytes(volume["emptyDir"]["sizeLimit"]) >= 3 * REDIS_MAXMEMORY_MIB
    assert args["maxmemory"] == f"{REDIS_MAXMEMORY_MIB}mb"
    assert args["maxmemory-policy"] == "noeviction"  # never a room or a vote (tests/test_store_blobs.py)
    resources_ = redis_container()["resources"]
    assert mebibytes(resources_["requests"]["memory"]) > REDIS_MAXMEMORY_MIB  # the data and Redis's overhead
    assert mebibytes(resources_["limits"]["memory"]) >= REDIS_MAXMEMORY_MIB * HEADROOM
    assert {"cpu", "memory"} <= set(resources_["limits"]) and {"cpu", "memory"} <= set(resources_["requests"])


def test_redis_is_one_pod_never_two_with_a_writable_data_dir_and_probes():
    d = redis_deployment()
    assert d["spec"]["replicas"] == 1
    assert d["spec"]["strategy"]["type"] == "Recreate"  # two at once would split the class's votes
    pod = redis_pod_spec()
    mounts = {m["mountPath"]: m["name"] for m in redis_container()["volumeMounts"]}
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert volumes[mounts["/data"]]["emptyDir"]["sizeLimit"]
    c = redis_container()
    ready, alive = c["readinessProbe"], c["livenessProbe"]
    command = ready["exec"]["command"]  # ready: it answers a command
    assert command[0] == "redis-cli" and command[-1] == "ping"
    assert alive["tcpSocket"]["port"] in ("redis", 6379)  # alive: it accepts a connection


def test_the_redis_image_is_pinned():
    image = redis_container()["image"]
    name, _, tag = image.rpartition(":")
    assert name.rsplit("/", 1)[-1].startswith("redis")
    assert "@sha256:" in image or re.fullmatch(r"7\.\d+\.\d+(-\w+)?", tag), image


def test_the_documented_managed_redis_secret_feeds_the_apps_variable():
    text = (ROOT / "docs" / "deploy.md").read_text()
    section = text[text.index("## A class with polls") :]
    docs = [doc for block in re.findall(r"```yaml\n(.*?)```", section, flags=re.S) for doc in yaml.safe_load_all(block)]
    (secret,) = [d for d in docs if d.get("kind") == "Secret"]
    kubernetes_validate.validate(secret, VERSION, strict=True)
    (env,) = [e for d in docs if "env" in d for e in d["env"]]
    assert env["name"] == "LNVIZ_REDIS_URL"
    ref = env["valueFrom"]["secretKeyRef"]
    assert ref["name"] == secret["metadata"]["name"] and ref["key"] in secret["stringData"]
    assert urlsplit(secret["stringData"][ref["key"]]).scheme in ("redis", "rediss")
