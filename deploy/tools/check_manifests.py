#!/usr/bin/env python3
"""Offline checks of the rendered Kubernetes manifests of deploy/ that schemas cannot express.

usage: check_manifests.py OUT_DIR RENDERED.yaml...

Each RENDERED file is the output of `kubectl kustomize` for one overlay, named after it
(`single.yaml`, `ha.yaml`, `grafana.yaml`). The script (run by .ci/deploy-check):

1. splits every render into the core Kubernetes objects, written to OUT_DIR/<name>.core.yaml for
   `kubernetes-validate --strict`, and the Prometheus Operator objects (ServiceMonitor,
   PrometheusRule), whose CRD schemas kubernetes-validate does not bundle;
2. checks those two kinds structurally: the fields the Operator's CRDs require, each field's
   type, and no field outside the subset of the CRD schema listed below (typos are errors);
3. writes the PrometheusRule groups to OUT_DIR/prometheusrule.rules.yaml for
   `promtool check rules`, and without annotations to OUT_DIR/prometheusrule.test-rules.yaml for
   `promtool test rules` (deploy/tests/alerts.test.yaml);
4. checks what the service relies on across objects: the variants ConfigMap holds exactly
   variants/*.rhai and is mounted as a directory (never subPath) where SHUANGKOU_VARIANTS_DIR
   points; the grace period covers preStop + drain delay + drain; gRPC probes on the health
   service; the hardened security context; resources; named Service ports the ServiceMonitor
   uses; per-overlay store, replicas and strategy; every SHUANGKOU_* variable and every
   shuangkou_* metric used in the manifests and the Grafana dashboard exists in src/.

Needs PyYAML (installed with yamllint). Exits 1 with every problem listed.
"""

import json
import os
import re
import sys

import yaml

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
PROBLEMS = []

# Kinds the core schemas of kubernetes-validate cover (anything else must be a checked CRD).
CORE_KINDS = {
    "ConfigMap", "Secret", "Service", "ServiceAccount", "Deployment", "StatefulSet",
    "PersistentVolumeClaim", "PodDisruptionBudget", "HorizontalPodAutoscaler", "NetworkPolicy",
}
CRD_KINDS = {"ServiceMonitor", "PrometheusRule"}

# The subset of the monitoring.coreos.com/v1 CRD schemas (prometheus-operator v0.7x) these
# manifests may use: field -> type, or a nested dict. A field not listed is reported.
LABELS = {"*": str}
SERVICE_MONITOR_SPEC = {
    "jobLabel": str,
    "targetLabels": [str],
    "podTargetLabels": [str],
    "selector": {"matchLabels": LABELS, "matchExpressions": [dict]},
    "namespaceSelector": {"any": bool, "matchNames": [str]},
    "sampleLimit": int,
    "endpoints": [{
        "port": str, "targetPort": (int, str), "path": str, "scheme": str, "interval": str,
        "scrapeTimeout": str, "honorLabels": bool, "honorTimestamps": bool,
        "relabelings": [dict], "metricRelabelings": [dict], "params": dict,
        "followRedirects": bool, "enableHttp2": bool, "filterRunning": bool,
    }],
}
PROMETHEUS_RULE_SPEC = {
    "groups": [{
        "name": str, "interval": str, "limit": int, "partial_response_strategy": str,
        "rules": [{
            "alert": str, "record": str, "expr": (str, int), "for": str,
            "keep_firing_for": str, "labels": LABELS, "annotations": LABELS,
        }],
    }],
}
METADATA = {"name": str, "namespace": str, "labels": LABELS, "annotations": LABELS}
DURATION = re.compile(r"^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?"
                      r"(([0-9]+)s)?(([0-9]+)ms)?)$")


def problem(where, message):
    PROBLEMS.append(f"{where}: {message}")


def check_shape(value, shape, where):
    """Checks `value` against `shape` (a type, a tuple of types, [shape] or {field: shape})."""
    if isinstance(shape, dict):
        if not isinstance(value, dict):
            problem(where, f"must be a mapping, got {type(value).__name__}")
            return
        for k, v in value.items():
            if k in shape:
                check_shape(v, shape[k], f"{where}.{k}")
            elif "*" in shape:
                check_shape(v, shape["*"], f"{where}.{k}")
            else:
                problem(where, f"unknown field {k!r} (not in the checked CRD subset)")
    elif isinstance(shape, list):
        if not isinstance(value, list):
            problem(where, f"must be a list, got {type(value).__name__}")
            return
        for i, v in enumerate(value):
            check_shape(v, shape[0], f"{where}[{i}]")
    else:
        types = shape if isinstance(shape, tuple) else (shape,)
        if not isinstance(value, types) or (bool not in types and isinstance(value, bool)):
            problem(where, f"must be {'/'.join(t.__name__ for t in types)}, got {value!r}")


def check_service_monitor(doc, where, services):
    check_shape(doc.get("metadata", {}), METADATA, f"{where}.metadata")
    spec = doc.get("spec")
    if not isinstance(spec, dict):
        problem(where, "spec is required")
        return
    check_shape(spec, SERVICE_MONITOR_SPEC, f"{where}.spec")
    if not spec.get("selector"):
        problem(where, "spec.selector is required")
    endpoints = spec.get("endpoints") or []
    if not endpoints:
        problem(where, "spec.endpoints must not be empty")
    selector = (spec.get("selector") or {}).get("matchLabels") or {}
    matching = [s for s in services
                if selector and all(s["metadata"].get("labels", {}).get(k) == v
                                    for k, v in selector.items())]
    if not matching:
        problem(where, f"no Service carries the labels {selector}")
    for i, ep in enumerate(endpoints):
        w = f"{where}.spec.endpoints[{i}]"
        for key in ("interval", "scrapeTimeout"):
            if key in ep and not DURATION.match(ep[key]):
                problem(w, f"{key} {ep[key]!r} is not a Prometheus duration")
        if "path" in ep and not ep["path"].startswith("/"):
            problem(w, "path must start with /")
        if ep.get("scheme", "http") not in ("http", "https"):
            problem(w, "scheme must be http or https")
        port = ep.get("port")
        for s in matching:
            names = [p.get("name") for p in s["spec"].get("ports", [])]
            if port not in names:
                problem(w, f"port {port!r} is not a named port of Service "
                        f"{s['metadata']['name']} ({names})")


def check_prometheus_rule(doc, where, metrics):
    check_shape(doc.get("metadata", {}), METADATA, f"{where}.metadata")
    spec = doc.get("spec")
    if not isinstance(spec, dict) or not spec.get("groups"):
        problem(where, "spec.groups is required")
        return
    check_shape(spec, PROMETHEUS_RULE_SPEC, f"{where}.spec")
    names = set()
    for g in spec["groups"]:
        gw = f"{where}.spec.groups[{g.get('name')}]"
        if not g.get("name"):
            problem(gw, "name is required")
        if g.get("name") in names:
            problem(gw, "duplicate group name")
        names.add(g.get("name"))
        if not g.get("rules"):
            problem(gw, "rules must not be empty")
        for r in g.get("rules") or []:
            rw = f"{gw}.{r.get('alert') or r.get('record')}"
            if ("alert" in r) == ("record" in r):
                problem(rw, "exactly one of alert or record is required")
            if not str(r.get("expr", "")).strip():
                problem(rw, "expr is required")
            if "for" in r and not DURATION.match(r["for"]):
                problem(rw, f"for {r['for']!r} is not a Prometheus duration")
            if "alert" in r:
                if r.get("labels", {}).get("severity") not in ("critical", "warning", "info"):
                    problem(rw, "alerts need a severity label (critical, warning or info)")
                for key in ("summary", "description"):
                    if not r.get("annotations", {}).get(key):
                        problem(rw, f"alerts need a {key} annotation")
            check_metric_names(str(r.get("expr", "")), metrics, rw)


def declared_metrics():
    """Metric names declared in src/metrics.rs (`pub const X: &str = "shuangkou_…";`)."""
    with open(os.path.join(REPO, "src", "metrics.rs"), encoding="utf-8") as f:
        text = f.read()
    names = set(re.findall(r'"(shuangkou_[a-z0-9_]+)"', text))
    histograms = set(re.findall(r"describe_histogram!\(\s*([A-Z_]+)", text))
    # Histograms described from a table (`const SECONDS_HISTOGRAMS: [(&str, &str); N] = [...]`).
    for table in re.findall(r"const [A-Z_]*HISTOGRAMS\b[^=]*=\s*\[(.*?)\];", text, re.S):
        histograms |= set(re.findall(r"\(\s*([A-Z_]+)\s*,", table))
    consts = dict(re.findall(r'pub const ([A-Z_]+): &str = "(shuangkou_[a-z0-9_]+)"', text))
    for h in histograms:
        if h in consts:
            for suffix in ("_bucket", "_sum", "_count"):
                names.add(consts[h] + suffix)
    return names


def check_metric_names(expr, metrics, where):
    # Recording rules are named shuangkou:…; metrics shuangkou_…
    for name in set(re.findall(r"\b(shuangkou_[a-z0-9_]+)", expr)):
        if name not in metrics:
            problem(where, f"metric {name} is not declared in src/metrics.rs")


def source_env_vars():
    """Every SHUANGKOU_* name that appears in src/ (flags' env names and direct reads)."""
    found = set()
    for root, _, files in os.walk(os.path.join(REPO, "src")):
        for name in files:
            if name.endswith(".rs"):
                with open(os.path.join(root, name), encoding="utf-8") as f:
                    found.update(re.findall(r"SHUANGKOU_[A-Z0-9_]+", f.read()))
    return found


def env_of(container):
    return {e["name"]: e.get("value") for e in container.get("env", [])}


def check_workload_security(pod, where):
    ctx = pod.get("securityContext", {})
    if ctx.get("runAsNonRoot") is not True:
        problem(where, "pod securityContext.runAsNonRoot must be true")
    if (ctx.get("seccompProfile") or {}).get("type") != "RuntimeDefault":
        problem(where, "pod seccompProfile must be RuntimeDefault")
    if pod.get("automountServiceAccountToken") is not False:
        problem(where, "automountServiceAccountToken must be false")
    for c in pod.get("containers", []):
        cw = f"{where}.containers[{c.get('name')}]"
        sc = c.get("securityContext", {})
        if sc.get("readOnlyRootFilesystem") is not True:
            problem(cw, "readOnlyRootFilesystem must be true")
        if sc.get("allowPrivilegeEscalation") is not False:
            problem(cw, "allowPrivilegeEscalation must be false")
        if (sc.get("capabilities") or {}).get("drop") != ["ALL"]:
            problem(cw, "capabilities.drop must be [ALL]")
        res = c.get("resources", {})
        for part in ("requests", "limits"):
            if not res.get(part, {}).get("memory"):
                problem(cw, f"resources.{part}.memory is required")
        if not res.get("requests", {}).get("cpu"):
            problem(cw, "resources.requests.cpu is required")
        if ":" not in c.get("image", "") or c.get("image", "").endswith(":latest"):
            problem(cw, f"image {c.get('image')!r} must be pinned to a tag")


def check_server(objs, overlay, where_prefix, env_names):
    deps = [o for o in objs if o["kind"] == "Deployment" and o["metadata"]["name"] == "shuangkou"]
    if len(deps) != 1:
        problem(where_prefix, "exactly one Deployment shuangkou expected")
        return
    dep = deps[0]
    w = f"{where_prefix}/Deployment/shuangkou"
    pod = dep["spec"]["template"]["spec"]
    check_workload_security(pod, w)
    main = [c for c in pod["containers"] if c["name"] == "shuangkou"][0]
    env = env_of(main)
    for name in env:
        if name.startswith("SHUANGKOU_") and name not in env_names:
            problem(w, f"env {name} is read nowhere in src/")
    # Secrets referenced by envFrom exist and hold the keys the service needs.
    secrets = {o["metadata"]["name"]: o for o in objs if o["kind"] == "Secret"}
    secret_keys = set()
    for ref in main.get("envFrom", []):
        name = (ref.get("secretRef") or {}).get("name")
        if name:
            if name not in secrets:
                problem(w, f"envFrom Secret {name} is not in the render")
                continue
            data = secrets[name].get("data", {}) or {}
            secret_keys.update(data)
            for key in data:
                if key.startswith("SHUANGKOU_") and key not in env_names:
                    problem(w, f"Secret key {key} is read nowhere in src/")
    if "SHUANGKOU_TOKEN_KEY" not in secret_keys:
        problem(w, "SHUANGKOU_TOKEN_KEY must come from a Secret (every replica shares it)")

    # The variants ConfigMap: a directory mount where SHUANGKOU_VARIANTS_DIR points.
    vdir = env.get("SHUANGKOU_VARIANTS_DIR")
    vols = {v["name"]: v for v in pod.get("volumes", [])}
    mounts = [m for m in main.get("volumeMounts", []) if m.get("mountPath") == vdir]
    if not vdir or len(mounts) != 1:
        problem(w, "SHUANGKOU_VARIANTS_DIR must be the mount path of one volume")
    else:
        m = mounts[0]
        if "subPath" in m or "subPathExpr" in m:
            problem(w, "the variants volume must be mounted as a directory, never with subPath")
        cm = (vols.get(m["name"], {}).get("configMap") or {}).get("name")
        if cm != "shuangkou-variants":
            problem(w, "the variants mount must be the shuangkou-variants ConfigMap")
        if vols.get(m["name"], {}).get("configMap", {}).get("items"):
            problem(w, "the variants ConfigMap volume must project every key (no items list)")
    cms = [o for o in objs if o["kind"] == "ConfigMap"
           and o["metadata"]["name"] == "shuangkou-variants"]
    if len(cms) != 1:
        problem(where_prefix, "the ConfigMap shuangkou-variants (no hash suffix) is missing")
    else:
        vdir_repo = os.path.join(REPO, "variants")
        files = sorted(f for f in os.listdir(vdir_repo) if f.endswith(".rhai"))
        keys = sorted(cms[0].get("data", {}))
        if keys != files:
            problem(where_prefix, f"ConfigMap keys {keys} differ from variants/*.rhai {files}: "
                    "list every script in variants/kustomization.yaml")
        for f in files:
            with open(os.path.join(vdir_repo, f), encoding="utf-8") as fh:
                if cms[0].get("data", {}).get(f) != fh.read():
                    problem(where_prefix, f"ConfigMap key {f} differs from variants/{f}")

    # Probes: native gRPC on the health service.
    ready = (main.get("readinessProbe") or {}).get("grpc") or {}
    if ready.get("port") != 50051 or ready.get("service") != "shuangkou.v1.GameEngine":
        problem(w, "readinessProbe must be grpc on 50051, service shuangkou.v1.GameEngine")
    for probe in ("livenessProbe", "startupProbe"):
        if not (main.get(probe) or {}).get("grpc"):
            problem(w, f"{probe} must be a grpc probe")
    if env.get("SHUANGKOU_LISTEN", "0.0.0.0:50051").rsplit(":", 1)[1] != "50051":
        problem(w, "the probes assume the gRPC port 50051")

    # Drain: preStop + drain delay + drain + margin within the grace period.
    grace = pod.get("terminationGracePeriodSeconds", 30)
    pre = (((main.get("lifecycle") or {}).get("preStop") or {}).get("sleep") or {}).get("seconds")
    if pre is None:
        problem(w, "a preStop sleep is required (endpoints removal before SIGTERM)")
        pre = 0
    delay = int(env.get("SHUANGKOU_DRAIN_DELAY_SECONDS") or 2)
    drain = int(env.get("SHUANGKOU_DRAIN_SECONDS") or 20)
    if pre + delay + drain + 5 > grace:
        problem(w, f"terminationGracePeriodSeconds {grace} < preStop {pre} + drain delay "
                f"{delay} + drain {drain} + 5 s margin")

    # Service and ports.
    svc = [o for o in objs if o["kind"] == "Service" and o["metadata"]["name"] == "shuangkou"]
    if len(svc) != 1:
        problem(where_prefix, "Service shuangkou is missing")
    else:
        ports = {p.get("name"): p for p in svc[0]["spec"].get("ports", [])}
        if ports.get("grpc", {}).get("appProtocol") != "kubernetes.io/h2c":
            problem(where_prefix, "Service port grpc needs appProtocol kubernetes.io/h2c")
        if "metrics" not in ports:
            problem(where_prefix, "Service port metrics is missing")
        sel = svc[0]["spec"].get("selector", {})
        labels = dep["spec"]["template"]["metadata"].get("labels", {})
        if not sel or any(labels.get(k) != v for k, v in sel.items()):
            problem(where_prefix, "Service shuangkou does not select the Deployment's pods")
        for o in objs:
            if o["kind"] in ("StatefulSet", "Deployment") and o is not dep:
                other = o["spec"]["template"]["metadata"].get("labels", {})
                if all(other.get(k) == v for k, v in sel.items()):
                    problem(where_prefix, f"Service shuangkou also selects {o['kind']} "
                            f"{o['metadata']['name']}")
    sa = [o for o in objs if o["kind"] == "ServiceAccount"
          and o["metadata"]["name"] == pod.get("serviceAccountName")]
    if not sa or sa[0].get("automountServiceAccountToken") is not False:
        problem(where_prefix, "the pod's ServiceAccount must exist with automount off")
    if not any(o["kind"] == "PodDisruptionBudget" for o in objs):
        problem(where_prefix, "a PodDisruptionBudget is required")

    store = env.get("SHUANGKOU_STORE", "memory")
    replicas = dep["spec"].get("replicas", 1)
    if overlay == "single":
        if replicas != 1:
            problem(w, "single: exactly one replica (the embedded store is one file)")
        if dep["spec"].get("strategy", {}).get("type") != "Recreate":
            problem(w, "single: strategy must be Recreate (the old pod releases the store)")
        data = [m for m in main.get("volumeMounts", []) if m.get("mountPath") == store]
        if not data or "persistentVolumeClaim" not in vols.get(data[0]["name"], {}):
            problem(w, f"single: SHUANGKOU_STORE {store!r} must be a PersistentVolumeClaim mount")
    elif overlay == "ha":
        if replicas < 2:
            problem(w, "ha: several replicas")
        if not store.startswith("redis://"):
            problem(w, "ha: SHUANGKOU_STORE must be a redis:// URL")
        host = re.sub(r"^redis://([^:/@]*@)?", "", store).split(":")[0].split("/")[0]
        if not any(o["kind"] == "Service" and o["metadata"]["name"] == host for o in objs):
            problem(w, f"ha: no Service {host} for SHUANGKOU_STORE")
        if not pod.get("topologySpreadConstraints"):
            problem(w, "ha: topologySpreadConstraints are required")
        hpa = [o for o in objs if o["kind"] == "HorizontalPodAutoscaler"]
        if not hpa or hpa[0]["spec"]["scaleTargetRef"].get("name") != "shuangkou":
            problem(where_prefix, "ha: a HorizontalPodAutoscaler of Deployment shuangkou")
        elif hpa[0]["spec"].get("minReplicas", 1) < 2:
            problem(where_prefix, "ha: the HPA must keep at least two replicas")
        redis = [o for o in objs if o["kind"] == "StatefulSet"]
        if not redis:
            problem(where_prefix, "ha: the Redis StatefulSet is missing")
        for r in redis:
            rw = f"{where_prefix}/StatefulSet/{r['metadata']['name']}"
            check_workload_security(r["spec"]["template"]["spec"], rw)
            args = " ".join(r["spec"]["template"]["spec"]["containers"][0].get("args", []))
            if "--appendonly yes" not in args:
                problem(rw, "Redis must run with --appendonly yes")
            if not r["spec"].get("volumeClaimTemplates"):
                problem(rw, "Redis needs a volumeClaimTemplate (persistence)")


def check_dashboard(path, metrics):
    with open(path, encoding="utf-8") as f:
        dash = json.load(f)
    ids = [p["id"] for p in dash.get("panels", [])]
    if len(ids) != len(set(ids)):
        problem(path, "duplicate panel ids")
    if not dash.get("uid") or not dash.get("title"):
        problem(path, "uid and title are required")
    exprs = 0
    for p in dash.get("panels", []):
        for t in p.get("targets", []):
            exprs += 1
            check_metric_names(t.get("expr", ""), metrics, f"{path}: panel {p.get('title')!r}")
    for v in dash.get("templating", {}).get("list", []):
        q = v.get("query")
        if isinstance(q, dict):
            check_metric_names(q.get("query", ""), metrics, f"{path}: variable {v.get('name')}")
    covered = {m for m in metrics if any(m in t.get("expr", "") for p in dash["panels"]
                                         for t in p.get("targets", []))}
    base = {m for m in metrics if not m.endswith(("_bucket", "_sum", "_count"))}
    for m in sorted(base):
        if m not in covered and m + "_bucket" not in covered:
            problem(path, f"metric {m} has no panel")
    return exprs


def write_rules(out, groups):
    """The rule groups as promtool reads them: in full (for `promtool check rules`, which also
    checks the annotation templates) and without annotations (for `promtool test rules`, whose
    tests are about when alerts fire and with which labels, not about their wording)."""
    with open(os.path.join(out, "prometheusrule.rules.yaml"), "w", encoding="utf-8") as f:
        yaml.safe_dump({"groups": groups}, f, sort_keys=False, allow_unicode=True, width=100)
    bare = [dict(g, rules=[{k: v for k, v in r.items() if k != "annotations"}
                           for r in g["rules"]]) for g in groups]
    with open(os.path.join(out, "prometheusrule.test-rules.yaml"), "w", encoding="utf-8") as f:
        yaml.safe_dump({"groups": bare}, f, sort_keys=False, allow_unicode=True, width=100)


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    metrics = declared_metrics()
    env_names = source_env_vars()
    rules_written = False
    for path in sys.argv[2:]:
        overlay = os.path.splitext(os.path.basename(path))[0]
        with open(path, encoding="utf-8") as f:
            objs = [d for d in yaml.safe_load_all(f) if d]
        core, crds = [], []
        for o in objs:
            kind = o.get("kind")
            where = f"{overlay}/{kind}/{o.get('metadata', {}).get('name')}"
            if kind in CORE_KINDS:
                core.append(o)
            elif kind in CRD_KINDS:
                if o.get("apiVersion") != "monitoring.coreos.com/v1":
                    problem(where, "apiVersion must be monitoring.coreos.com/v1")
                crds.append(o)
            else:
                problem(where, "a kind neither the core schemas nor the CRD checks cover")
        services = [o for o in core if o["kind"] == "Service"]
        for o in crds:
            where = f"{overlay}/{o['kind']}/{o['metadata'].get('name')}"
            if o["kind"] == "ServiceMonitor":
                check_service_monitor(o, where, services)
            else:
                check_prometheus_rule(o, where, metrics)
                if not rules_written:
                    write_rules(out, o["spec"]["groups"])
                    rules_written = True
        if overlay in ("single", "ha", "base"):
            check_server(objs, overlay, overlay, env_names)
        with open(os.path.join(out, f"{overlay}.core.yaml"), "w", encoding="utf-8") as f:
            yaml.safe_dump_all(core, f, sort_keys=False, allow_unicode=True)
        print(f"{overlay}: {len(core)} core objects, {len(crds)} Prometheus Operator objects")
    dash = os.path.join(REPO, "deploy", "grafana", "shuangkou.json")
    print(f"grafana: {check_dashboard(dash, metrics)} queries")
    if not rules_written:
        problem("renders", "no PrometheusRule found")
    if PROBLEMS:
        print(f"{len(PROBLEMS)} problem(s):", file=sys.stderr)
        for p in PROBLEMS:
            print(f"  - {p}", file=sys.stderr)
        sys.exit(1)
    print("manifest checks: ok")


if __name__ == "__main__":
    main()
