#!/usr/bin/env bash
# Build what the GPU machine needs to run Ray (it has no Ray and no network), small enough to
# carry (64 MiB a call, with .whl): in the repository you stand in,
#   .ray/ray-core.tar.xz   Ray's wheel for cp312 manylinux x86_64, unpacked, without the parts a
#                          fleet does not use (Java jars, RLlib, the dashboard's web client, Data,
#                          Serve, Train, Tune, LLM), xz -6
#   .ray/wheels/*.whl      what Ray core needs that the device image lacks (jsonschema and its
#                          deps: KINDS.md lists click, filelock, msgpack, packaging, protobuf,
#                          pyyaml, requests there)
# Usage: bash benchmarks/ray_for_device.sh [--verify|--verify-only]   (RAY_VERSION=2.60.0 by default)
#   --verify: also strip the cp311 wheel the same way, install DEPS into it as the device does,
#             and run a 2-node ray.cluster_utils cluster with one actor per node
#             (NodeAffinitySchedulingStrategy) from that tree, here (Python 3.11). PYTHON=... picks
#             the interpreter: a bare venv with only the device's packages tests DEPS too.
#   --verify-only: that, without building
# Then the device command starts with (carry ".whl" and ".ray"):
#   mkdir -p /tmp/site && tar -xJf .ray/ray-core.tar.xz -C /tmp/site && python3 -m pip install -q \
#     --no-index --no-deps --no-compile --target /tmp/site .ray/wheels/*.whl .whl/*.whl && export PYTHONPATH=/tmp/site:$PWD
set -euo pipefail
top=$(git rev-parse --show-toplevel)
cd "$top"
RAY_VERSION=${RAY_VERSION:-2.60.0}
ex=$(git rev-parse --git-path info/exclude)  # a worktree shares the main one
mkdir -p "$(dirname "$ex")"; grep -qxF '/.ray/' "$ex" 2>/dev/null || printf '\n/.ray/\n' >> "$ex"
# downloads and unpacked trees stay outside .ray: everything in .ray is carried
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ray_for_device.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# what the fleet (Ray core actors + ray.cluster_utils, include_dashboard=False) does without
STRIP=(jars rllib dashboard/client/build data serve train tune llm)
DEPS=(jsonschema jsonschema-specifications referencing rpds-py)

download() {  # download PY_VERSION DIR PACKAGE...
  local py=$1 dir=$2; shift 2
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version "$py" --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    -d "$dir" "$@"
}

stripped_tree() {  # stripped_tree WHEEL DEST: the wheel unpacked, minus STRIP and bytecode
  local whl=$1 dest=$2
  rm -rf "$dest" && mkdir -p "$dest"
  python3 -m zipfile -e "$whl" "$dest"
  for d in "${STRIP[@]}"; do rm -rf "${dest:?}/ray/$d"; done
  find "$dest" -name __pycache__ -type d -prune -exec rm -rf {} +
  # the wheel's RECORD lists the removed files; nothing reads it when Ray is imported from a path
  chmod -R u+w "$dest"
  find "$dest/ray" \( -name '*.so' -o -path '*/core/src/ray/raylet/raylet' -o -path '*/core/src/ray/gcs/gcs_server' \) \
    -exec chmod +x {} +
}

build() {
mkdir -p "$tmp/dl" .ray/wheels
download 3.12 "$tmp/dl" "ray==$RAY_VERSION"
whl=$(ls "$tmp"/dl/ray-"$RAY_VERSION"-cp312-*.whl)
# anything Ray core requires (not an extra) beyond what the device has must be in DEPS
unzip -p "$whl" "ray-$RAY_VERSION.dist-info/METADATA" | grep '^Requires-Dist:' | grep -v 'extra ==' \
  | sed -E 's/Requires-Dist: ([A-Za-z0-9_.-]+).*/\1/' | while read -r dep; do
  case "$dep" in
    click|filelock|msgpack|packaging|protobuf|pyyaml|requests|jsonschema) ;;
    *) echo "ray_for_device: Ray $RAY_VERSION requires $dep: check the device has it (KINDS.md)" >&2 ;;
  esac
done
stripped_tree "$whl" "$tmp/build"
tar -C "$tmp/build" -cf - . | xz -6 -T0 > "$tmp/ray-core.tar.xz"
mv "$tmp/ray-core.tar.xz" .ray/ray-core.tar.xz
rm -rf .ray/wheels/*.whl
download 3.12 .ray/wheels "${DEPS[@]}"
rm -rf "$tmp/build"
echo "ray-core.tar.xz: $(du -h .ray/ray-core.tar.xz | cut -f1); wheels: $(du -sh .ray/wheels | cut -f1) ($(ls .ray/wheels | tr '\n' ' '))"
du -shc .ray $([ -d .whl ] && echo .whl) | tail -1 | sed 's/total/carried in all (.ray + .whl), must stay under 60M/'
}

verify() {
  v=$tmp/verify
  rm -rf "$v" && mkdir -p "$v/dl" "$v/deps"
  download 3.11 "$v/dl" "ray==$RAY_VERSION"
  download 3.11 "$v/deps" "${DEPS[@]}"
  stripped_tree "$(ls "$v"/dl/ray-"$RAY_VERSION"-cp311-*.whl)" "$v/site"
  "${PYTHON:-python3}" -m pip install -q --no-index --no-deps --no-compile --target "$v/site" "$v"/deps/*.whl
  # the stripped tree ahead of any installed Ray; -s: no user site
  RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 PYTHONPATH="$v/site" timeout 300 "${PYTHON:-python3}" -s - <<'EOF'
import os, sys
import ray
assert "/verify/site/" in ray.__file__, ray.__file__
from ray.cluster_utils import Cluster
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
for gone in ("jars", "rllib", "data", "serve", "train", "tune", "llm", "dashboard/client/build"):
    assert not os.path.exists(os.path.join(os.path.dirname(ray.__file__), gone)), gone
node = dict(num_cpus=1, object_store_memory=100 * 2**20, node_ip_address="127.0.0.1")
c = Cluster(initialize_head=True, connect=False, head_node_args={**node, "include_dashboard": False})
c.add_node(**node)
c.wait_for_nodes()
ray.init(address=c.address, _node_ip_address="127.0.0.1", log_to_driver=False)

@ray.remote(num_cpus=0)
class Probe:
    def where(self):
        return ray.get_runtime_context().get_node_id(), os.getpid(), ray.__file__

nodes = [n["NodeID"] for n in ray.nodes() if n["Alive"]]
actors = [Probe.options(scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=n, soft=False)).remote()
          for n in nodes]
got = ray.get([a.where.remote() for a in actors], timeout=120)
assert [g[0] for g in got] == nodes and len({g[1] for g in got}) == 2, got
import jsonschema
print(f"verify: jsonschema from {jsonschema.__file__}")
print(f"verify: ray {ray.__version__} from {os.path.dirname(ray.__file__)}: 2 nodes, one actor on each {got}")
ray.shutdown()
c.shutdown()
EOF
  rm -rf "$v"
}

case "${1:-}" in
  "") build ;;
  --verify) build; verify ;;
  --verify-only) verify ;;
  *) echo "usage: $0 [--verify|--verify-only]" >&2; exit 2 ;;
esac
