#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Every YAML block of the docs (README.md, docs/, python/README.md, deploy/): it
# parses; a Kubernetes object goes through the manifests' checker
# (deploy/check/check-kubernetes.mjs, the schemas deploy/kubernetes is held to);
# a piece of one (containers or a pod spec without apiVersion and kind) is refused,
# since the checker cannot judge it; and the args of a container of the gpulens
# image are options gpulens-serve accepts, since the image's entrypoint is the
# agent itself (a first argument `serve` crash-loops the pod: issue 48). The same
# args check holds deploy/kubernetes/base. Usage: docs_yaml.sh GPULENS_SERVE_BINARY.
# Fails, never skips, without python3, node or the checker's packages: scripts/setup.sh
# --tests installs them all, so a missing one is a broken setup, not a pass.
set -euo pipefail
command -v python3 >/dev/null 2>&1 || { echo "FAIL: python3 is not installed (scripts/setup.sh --tests)" >&2; exit 1; }
repo="$(cd "$(dirname "$0")/../.." && pwd)"
serve_bin=${1:?usage: docs_yaml.sh GPULENS_SERVE_BINARY}
command -v node >/dev/null 2>&1 || { echo "FAIL: node is not installed (Debian: nodejs; scripts/setup.sh --tests)" >&2; exit 1; }
[[ -d "$repo/deploy/check/node_modules/kubernetes-models" ]] ||
  { echo "FAIL: deploy/check/node_modules missing (scripts/setup.sh runs npm ci there)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$serve_bin" --help >"$work/help.txt"
python3 - "$repo" "$work" <<'PY'
import glob, os, re, sys, yaml
repo, work = sys.argv[1], sys.argv[2]
# gpulens-serve's options from its --help (CLI11: "  --name TYPE ..." takes a value,
# "  --name  words" is a flag).
options = {}
for line in open(os.path.join(work, "help.txt")):
    m = re.match(r"\s+(?:-\w,\s*)?(--[\w-]+)(?:,\s*--[\w-]+)*(\s+[A-Z][A-Z:]*\b)?", line)
    if m:
        options[m.group(1)] = bool(m.group(2))
if "--listen" not in options or options["--listen"] is not True:
    sys.exit(f"cannot read gpulens-serve's options from its --help ({len(options)} read)")

docs = [os.path.join(repo, "README.md"), os.path.join(repo, "python", "README.md")]
docs += sorted(glob.glob(os.path.join(repo, "docs", "**", "*.md"), recursive=True))
docs += sorted(p for p in glob.glob(os.path.join(repo, "deploy", "**", "*.md"), recursive=True)
               if "node_modules" not in p.split(os.sep))
fence = re.compile(r"^(\s*)```\s*(yaml|yml)\s*$")
blocks = []  # (where, text)
for path in docs:
    lines = open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        m = fence.match(lines[i])
        if not m:
            i += 1
            continue
        indent, start, body = len(m.group(1)), i + 1, []
        i += 1
        while i < len(lines) and lines[i].strip() != "```":
            body.append(lines[i][indent:] if lines[i][:indent].strip() == "" else lines[i])
            i += 1
        blocks.append((f"{os.path.relpath(path, repo)}:{start}", "\n".join(body) + "\n"))
        i += 1

problems = []
def walk(node):
    if isinstance(node, dict):
        yield node
        for v in node.values():
            yield from walk(v)
    elif isinstance(node, list):
        for v in node:
            yield from walk(v)

def check_args(where, obj):
    for d in walk(obj):
        if not (isinstance(d.get("image"), str) and "gpulens" in d["image"]):
            continue
        if "command" in d:
            continue  # another entrypoint: its arguments are its own
        args, takes_value = [str(a) for a in d.get("args", [])], False
        for a in args:
            if takes_value:
                takes_value = False
                continue
            name = a.split("=", 1)[0]
            if name not in options:
                problems.append(f"{where}: container {d.get('name')}: argument '{a}' is not an "
                                f"option of gpulens-serve (the image's entrypoint is the agent)")
                continue
            takes_value = options[name] and "=" not in a
        if takes_value:
            problems.append(f"{where}: container {d.get('name')}: '{args[-1]}' lacks its value")

objects = 0
for n, (where, text) in enumerate(blocks):
    try:
        parsed = [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError as e:
        problems.append(f"{where}: not YAML: {e}")
        continue
    kube = [d for d in parsed if isinstance(d, dict) and "apiVersion" in d and "kind" in d]
    if kube:
        out = os.path.join(work, f"block{n}.yaml")
        with open(out, "w") as f:
            yaml.safe_dump_all(kube, f)
        with open(out + ".where", "w") as f:
            f.write(where)
        objects += len(kube)
        for d in kube:
            check_args(where, d)
    for d in parsed:
        if d in kube:
            continue
        if any(key in ("containers", "hostPID", "template") for node in walk(d) for key in node):
            problems.append(f"{where}: a piece of a Kubernetes object: write the whole object "
                            "(apiVersion, kind, metadata) so that it can be checked")
for f in sorted(glob.glob(os.path.join(repo, "deploy", "kubernetes", "base", "*.yaml"))):
    for d in yaml.safe_load_all(open(f)):
        if d is not None:
            check_args(os.path.relpath(f, repo), d)
if problems:
    sys.exit("\n".join(problems))
print(f"{len(blocks)} YAML blocks in {len(docs)} files parse; {objects} Kubernetes objects "
      f"go to the checker; {len(options)} options of gpulens-serve known")
PY
shopt -s nullglob
for f in "$work"/block*.yaml; do
  node "$repo/deploy/check/check-kubernetes.mjs" "$f" ||
    { echo "FAIL: $(cat "$f.where"): the Kubernetes object above does not validate" >&2; exit 1; }
done
