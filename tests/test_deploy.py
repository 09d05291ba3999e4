"""What can be checked here of ``deploy/``: the Kubernetes manifests parse and fit together (the
probes and ports are the app's real ones, the Host header the probes send is one the app takes,
the Service name is allowed), the WORKFLOW.md of the ConfigMap loads, the Dockerfile runs a
``lorenz serve`` command line that parses and refuses to start without a token, and docs/deploy.md
shows the same commands."""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from ruamel.yaml import YAML
from starlette.routing import Route

from lorenz.cli.parser import build_parser
from lorenz.host.app import build_app
from lorenz.host.http.loopback import serve_app_in_thread
from lorenz.host.refusals import http_refusal
from lorenz.host.reload.live import LiveWorkspace
from lorenz.host.security import host_allowed
from lorenz.workspace import open_workspace

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "deploy"
DOCS = (ROOT / "docs" / "deploy.md").read_text(encoding="utf-8")
SECRETS = {"LORENZ_MCP_TOKEN": "test-token-0123456789", "LINEAR_API_KEY": "lin_api_test"}


def manifests() -> dict[str, dict[str, Any]]:
    """Every Kubernetes object of deploy/kubernetes by kind (each kind once)."""
    found: dict[str, dict[str, Any]] = {}
    for path in sorted((DEPLOY / "kubernetes").glob("*.yaml")):
        for document in YAML(typ="safe").load_all(path.read_text(encoding="utf-8")):
            assert document["kind"] not in found, f"{path.name}: a second {document['kind']}"
            found[document["kind"]] = document
    return found


K8S = manifests()
POD = K8S["Deployment"]["spec"]["template"]
CONTAINER = POD["spec"]["containers"][0]


def dockerfile() -> list[tuple[str, str]]:
    """``(INSTRUCTION, arguments)`` of deploy/Dockerfile, continuation lines joined."""
    text = re.sub(r"\\\n", " ", (DEPLOY / "Dockerfile").read_text(encoding="utf-8"))
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1]) for line in lines]


DOCKERFILE = dockerfile()


def instruction(name: str) -> list[str]:
    return [arguments for key, arguments in DOCKERFILE if key == name]


def exec_form(name: str) -> list[str]:
    [arguments] = instruction(name)
    words = YAML(typ="safe").load(arguments)  # the exec form is a JSON array
    assert isinstance(words, list)
    return [str(word) for word in words]


def container_command() -> list[str]:
    """What the container runs: the image's ENTRYPOINT (past tini) with the Deployment's args."""
    entrypoint = exec_form("ENTRYPOINT")
    assert entrypoint[:2] == ["tini", "--"]
    return [*entrypoint[2:], *CONTAINER["args"]]


def workflow_text() -> str:
    return str(K8S["ConfigMap"]["data"]["WORKFLOW.md"])


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> LiveWorkspace:
    """The ConfigMap's WORKFLOW.md, opened with the Secret's variables set, as a replica opens it."""
    directory = tmp_path_factory.mktemp("etc-lorenz")
    (directory / "WORKFLOW.md").write_text(workflow_text())
    env = {**SECRETS, "LORENZ_LOAD_PLUGINS": "lorenz-linear"}
    workspace = open_workspace(directory / "WORKFLOW.md", cwd=directory, env=env)
    return LiveWorkspace(workspace, workflow=str(directory / "WORKFLOW.md"), cwd=directory, env=env)


def probes() -> Iterator[tuple[str, dict[str, Any]]]:
    for name in ("startupProbe", "readinessProbe", "livenessProbe"):
        yield name, CONTAINER[name]["httpGet"]


def test_manifests_parse_and_hold_a_deployment_of_two_replicas_a_service_and_the_workflow() -> None:
    assert {"Namespace", "ConfigMap", "Deployment", "Service", "Kustomization"} <= set(K8S)
    assert K8S["Deployment"]["spec"]["replicas"] == 2
    listed = set(K8S["Kustomization"]["resources"])
    assert listed == {path.name for path in (DEPLOY / "kubernetes").glob("*.yaml")} - {"kustomization.yaml"}
    namespace = K8S["Namespace"]["metadata"]["name"]
    for kind in ("ConfigMap", "Deployment", "Service"):
        assert K8S[kind]["metadata"]["namespace"] == namespace


def test_the_service_selects_the_pods_and_targets_the_served_port() -> None:
    service = K8S["Service"]["spec"]
    labels = POD["metadata"]["labels"]
    assert all(labels.get(key) == value for key, value in service["selector"].items())
    assert K8S["Deployment"]["spec"]["selector"]["matchLabels"] == service["selector"]
    ports = {port["name"]: port["containerPort"] for port in CONTAINER["ports"]}
    [service_port] = service["ports"]
    assert ports[service_port["targetPort"]] == 4040
    assert exec_form("ENTRYPOINT")[exec_form("ENTRYPOINT").index("--port") + 1] == "4040"
    assert instruction("EXPOSE") == ["4040"]


def test_probes_get_healthz_on_the_served_port_with_a_host_the_app_takes(live: LiveWorkspace) -> None:
    """Each probe is a GET of a route the app really has, on the container's port, and the app
    answers it 200 with the probe's headers (the pod IP the kubelet would name is refused)."""
    app = build_app(live, bind_host="0.0.0.0")
    routes = {route.path: route.methods for route in app.routes if isinstance(route, Route)}
    ports = {port["name"]: port["containerPort"] for port in CONTAINER["ports"]}
    with serve_app_in_thread(app, lifespan="on") as server, httpx.Client() as http:
        for name, probe in probes():
            assert probe["path"] in routes and "GET" in (routes[probe["path"]] or ()), name
            assert probe["port"] in ports, name
            headers = {header["name"]: header["value"] for header in probe.get("httpHeaders", [])}
            # A loopback name is taken on the port served only: the probe names the container's.
            assert headers["Host"] == f"localhost:{ports[probe['port']]}", name
            headers["Host"] = "localhost:" + server.base_url.rsplit(":", 1)[1]
            assert http.get(server.base_url + probe["path"], headers=headers).status_code == 200, name
        assert http.get(server.base_url + "/healthz", headers={"Host": "10.1.2.3:4040"}).status_code == 421


def test_the_configmap_workflow_loads_and_allows_the_service_names(live: LiveWorkspace) -> None:
    settings = live.snapshot().settings.server
    name, namespace = K8S["Service"]["metadata"]["name"], K8S["Service"]["metadata"]["namespace"]
    port = K8S["Service"]["spec"]["ports"][0]["port"]
    for host in (name, f"{name}.{namespace}", f"{name}.{namespace}.svc", f"{name}.{namespace}.svc.cluster.local"):
        assert host_allowed(f"{host}:{port}", settings.allowed_hosts), host
    nginx_name = re.search(r"server_name\s+([^;\s]+);", (DEPLOY / "nginx" / "lorenz.conf").read_text()).group(1)  # type: ignore[union-attr]
    assert host_allowed(nginx_name, settings.allowed_hosts)
    assert settings.token == SECRETS["LORENZ_MCP_TOKEN"]  # from the Secret, through the environment


def test_the_workflow_is_mounted_where_the_image_looks_and_secrets_come_from_the_secret() -> None:
    env = dict(word.split("=", 1) for word in shlex.split(" ".join(instruction("ENV"))))
    workflow = Path(env["LORENZ_WORKFLOW"])
    mounts = {mount["name"]: mount["mountPath"] for mount in CONTAINER["volumeMounts"]}
    volumes = {volume["name"]: volume for volume in POD["spec"]["volumes"]}
    [(volume, _)] = [(name, path) for name, path in mounts.items() if path == str(workflow.parent)]
    assert volumes[volume]["configMap"]["name"] == K8S["ConfigMap"]["metadata"]["name"]
    assert workflow.name in K8S["ConfigMap"]["data"]
    variables = {item["name"]: item["valueFrom"]["secretKeyRef"] for item in CONTAINER["env"]}
    assert set(variables) == set(SECRETS)
    for reference in variables.values():
        # docs/deploy.md creates that Secret with that key
        assert f"--from-literal={reference['key']}=" in DOCS and f"secret generic {reference['name']}" in DOCS
    assert "$LINEAR_API_KEY" in workflow_text()


def test_the_pod_runs_as_the_image_user_without_privileges() -> None:
    [user] = instruction("USER")
    assert user.split(":")[0] == str(POD["spec"]["securityContext"]["runAsUser"]) != "0"
    assert POD["spec"]["securityContext"]["runAsNonRoot"] is True
    assert CONTAINER["securityContext"]["allowPrivilegeEscalation"] is False
    assert CONTAINER["securityContext"]["capabilities"]["drop"] == ["ALL"]


def test_the_container_command_is_lorenz_serve_beyond_loopback_that_needs_a_token(live: LiveWorkspace) -> None:
    """The image's ENTRYPOINT with the Deployment's args parses as `lorenz serve`; without a token
    that command line is refused, with the Secret's it starts."""
    command = container_command()
    assert command[0] == "lorenz"
    args = build_parser().parse_args(command[1:])
    assert (args.command, args.host, args.port, args.workers, args.allow_no_token) == (
        "serve",
        "0.0.0.0",
        4040,
        2,
        False,
    )
    settings = live.snapshot().settings.server
    assert http_refusal(settings, host=args.host, workers=args.workers, allow_no_token=False) is None
    tokenless = type(settings)(allowed_hosts=settings.allowed_hosts)
    refusal = http_refusal(tokenless, host=args.host, workers=args.workers, allow_no_token=False)
    assert refusal is not None and "LORENZ_MCP_TOKEN" in refusal


def test_dockerfile_is_slim_non_root_from_wheels_with_a_healthcheck() -> None:
    froms = instruction("FROM")
    assert len(froms) == 2 and all("-slim" in line for line in froms)
    runs = " ".join(instruction("RUN"))
    assert "pip wheel" in runs and "--no-index" in runs  # built as wheels, installed from them only
    [default] = [shlex.split(arguments)[0] for arguments in instruction("ARG") if arguments.startswith("PLUGINS=")]
    plugins = default.removeprefix("PLUGINS=").split()
    assert plugins and all((ROOT / plugin / "pyproject.toml").is_file() for plugin in plugins)
    [healthcheck] = instruction("HEALTHCHECK")
    assert "http://127.0.0.1:4040/healthz" in healthcheck


def test_docs_show_the_dockerfiles_own_build_and_run_lines() -> None:
    """The `docker build` / `docker run` lines in the Dockerfile's header are the ones docs/deploy.md
    gives, and the kubectl line applies the directory that exists."""
    header = [line[1:].strip() for line in (DEPLOY / "Dockerfile").read_text().splitlines() if line.startswith("#")]
    docker_lines = [line for line in header if line.startswith("docker ")]
    assert len(docker_lines) >= 3
    for line in docker_lines:
        assert line in DOCS, line
    assert "kubectl apply -k deploy/kubernetes" in DOCS
    for path in re.findall(r"`(deploy/[\w./-]+)`", DOCS):
        assert (ROOT / path).exists(), path


def test_nginx_streams_server_sent_events() -> None:
    text = (DEPLOY / "nginx" / "lorenz.conf").read_text()
    directives = dict(re.findall(r"^\s*(proxy_buffering|proxy_read_timeout|proxy_http_version)\s+([^;]+);", text, re.M))
    assert directives == {"proxy_buffering": "off", "proxy_read_timeout": "1h", "proxy_http_version": "1.1"}
    assert re.search(r"server 127\.0\.0\.1:4040;", text)
    assert "proxy_set_header Host $host;" in text
