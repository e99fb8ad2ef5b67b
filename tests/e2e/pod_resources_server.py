#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A kubelet's pod-resources gRPC server for the tests: real gRPC (grpcio) on a
unix socket, answering List from a JSON file read at each call, so the test
changes the pods while it runs. The file also sets how the server misbehaves.

  pod_resources_server.py SOCKET PODS_JSON PB2_DIR

PODS_JSON: {"mode": "ok" | "slow" | "garbage" | "huge" | "unavailable",
            "delay_s": 5, "pods": [{"namespace": "ml", "name": "train-0",
            "containers": [{"name": "trainer", "devices": [
                {"resource": "nvidia.com/gpu", "ids": ["GPU-..."]}]}]}]}
PB2_DIR holds podresources_v1_pb2.py, made by protoc from podresources_v1.proto.
"""
import json
import os
import sys
import time
from concurrent import futures

import grpc

sock, pods_path, pb2_dir = sys.argv[1:4]
sys.path.insert(0, pb2_dir)
import podresources_v1_pb2 as pb  # noqa: E402

calls = 0


def answer(pods):
    out = pb.ListPodResourcesResponse()
    for p in pods:
        pod = out.pod_resources.add(name=p["name"], namespace=p["namespace"])
        for c in p.get("containers", []):
            container = pod.containers.add(name=c["name"], cpu_ids=[0, 1])
            for d in c.get("devices", []):
                dev = container.devices.add(resource_name=d["resource"], device_ids=d["ids"])
                dev.topology.nodes.add(ID=0)
            container.memory.add(memory_type="memory", size=1 << 30)
    return out.SerializeToString()


def list_pods(request, context):
    global calls
    calls += 1
    with open(pods_path) as f:
        spec = json.load(f)
    with open(pods_path + ".calls", "w") as f:
        f.write(str(calls))
    mode = spec.get("mode", "ok")
    if mode == "slow":
        time.sleep(spec.get("delay_s", 5))
    if mode == "garbage":
        return b"\x0a\xff\xff\xff\x0f not protobuf"
    if mode == "huge":
        # One pod whose name is 17 MiB: past gpulens' bound of 16 MiB an answer.
        return answer([{"namespace": "x", "name": "a" * (17 << 20)}])
    if mode == "unavailable":
        context.abort(grpc.StatusCode.UNAVAILABLE, "kubelet is restarting")
    return answer(spec.get("pods", []))


handler = grpc.method_handlers_generic_handler(
    "v1.PodResourcesLister",
    {"List": grpc.unary_unary_rpc_method_handler(
        list_pods,
        request_deserializer=pb.ListPodResourcesRequest.FromString,
        response_serializer=lambda raw: raw)},
)
server = grpc.server(futures.ThreadPoolExecutor(max_workers=4),
                     options=[("grpc.max_send_message_length", 64 << 20)])
server.add_generic_rpc_handlers((handler,))
if os.path.exists(sock):
    os.unlink(sock)
server.add_insecure_port("unix:" + sock)
server.start()
print("listening on", sock, flush=True)
server.wait_for_termination()
