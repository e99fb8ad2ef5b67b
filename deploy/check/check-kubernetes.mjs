// SPDX-License-Identifier: Apache-2.0
// Validates every object of deploy/kubernetes against the Kubernetes API schemas
// (kubernetes-models, generated from the API's OpenAPI) and, for ServiceMonitor
// and PodMonitor, the prometheus-operator CRD schemas. Offline once installed.
// Usage: node check-kubernetes.mjs FILE.yaml...   (exit 1 on any error)
import { readFileSync } from "node:fs";
import yaml from "js-yaml";
import { DaemonSet } from "kubernetes-models/apps/v1";
import { ConfigMap, Namespace, Pod, Service } from "kubernetes-models/v1";
import { PodMonitor, PrometheusRule, ServiceMonitor } from "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1";

const kinds = { DaemonSet, ConfigMap, Namespace, Pod, Service, ServiceMonitor, PodMonitor, PrometheusRule };
let errors = 0;
let checked = 0;
for (const file of process.argv.slice(2)) {
  for (const doc of yaml.loadAll(readFileSync(file, "utf8"))) {
    if (doc == null) continue;
    if (doc.kind === "Kustomization") continue; // kustomize's own file: not an API object
    const Model = kinds[doc.kind];
    if (!Model) {
      console.error(`${file}: no schema for kind ${doc.kind}`);
      errors++;
      continue;
    }
    try {
      new Model(doc).validate();
      checked++;
    } catch (e) {
      console.error(`${file}: ${doc.kind} ${doc.metadata?.name}: ${e.message}`);
      errors++;
    }
  }
}
console.log(`${checked} objects valid, ${errors} errors`);
process.exit(errors === 0 && checked > 0 ? 0 : 1);
