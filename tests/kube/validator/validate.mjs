// Validates what `parallex kube --format json` prints (a v1 List, on stdin)
// against the Kubernetes schemas, strictly: a field the schema does not know
// is refused, as `kubectl apply --validate=strict` refuses it.
//
// Pod, NetworkPolicy and ConfigMap: the validators of the npm package
// kubernetes-models, generated from Kubernetes' own OpenAPI schema. Those
// check types, enums and required fields but let unknown fields pass, so each
// document is read through a Proxy that records every field the validator
// looks at: a field it never looked at is one the schema does not have.
//
// SandboxTemplate (agent-sandbox, extensions.agents.x-k8s.io/v1beta1): its
// CRD's fields, written out below in this test's own words; the pod template
// and the network rules inside it are Kubernetes types, checked as above.
//
// Prints one line per problem; exits 1 when there is any.
import { readFileSync } from "node:fs";
import { validate as pod } from "kubernetes-models/_schemas/IoK8sApiCoreV1Pod";
import { validate as podSpec } from "kubernetes-models/_schemas/IoK8sApiCoreV1PodSpec";
import { validate as configMap } from "kubernetes-models/_schemas/IoK8sApiCoreV1ConfigMap";
import { validate as networkPolicy } from "kubernetes-models/_schemas/IoK8sApiNetworkingV1NetworkPolicy";
import { validate as egressRule } from "kubernetes-models/_schemas/IoK8sApiNetworkingV1NetworkPolicyEgressRule";
import { validate as ingressRule } from "kubernetes-models/_schemas/IoK8sApiNetworkingV1NetworkPolicyIngressRule";
import { validate as objectMeta } from "@kubernetes-models/apimachinery/_schemas/IoK8sApimachineryPkgApisMetaV1ObjectMeta";
import { validate as pvcSpec } from "kubernetes-models/_schemas/IoK8sApiCoreV1PersistentVolumeClaimSpec";

const problems = [];

// Runs `validate` on `doc`; reports its errors and every field it never read.
function strict(validate, doc, where) {
  const read = new Map();
  const watch = (value) => {
    if (value === null || typeof value !== "object") return value;
    const seen = new Set();
    read.set(value, seen);
    return new Proxy(value, {
      get(target, key) {
        if (typeof key === "string") seen.add(key);
        return watch(target[key]);
      },
    });
  };
  if (!validate(watch(doc)))
    for (const e of validate.errors) problems.push(`${where}${e.instancePath}: ${e.keyword} ${JSON.stringify(e.params)}`);
  const walk = (value, path) => {
    if (value === null || typeof value !== "object") return;
    const seen = read.get(value);
    for (const key of Object.keys(value)) {
      if (!Array.isArray(value) && !(seen && seen.has(key))) {
        problems.push(`${where}${path}/${key}: unknown field`);
        continue;
      }
      walk(value[key], `${path}/${key}`);
    }
  };
  walk(doc, "");
}

// A map that may hold only `fields` (name -> check), with `required` present.
function object(value, where, fields, required = []) {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    problems.push(`${where}: not an object`);
    return;
  }
  for (const key of required) if (!(key in value)) problems.push(`${where}/${key}: required`);
  for (const [key, v] of Object.entries(value)) {
    if (!(key in fields)) problems.push(`${where}/${key}: unknown field`);
    else fields[key](v, `${where}/${key}`);
  }
}
const oneOf = (...allowed) => (v, where) => {
  if (!allowed.includes(v)) problems.push(`${where}: ${JSON.stringify(v)} is not one of ${allowed.join(", ")}`);
};
const string = (v, where) => typeof v === "string" || problems.push(`${where}: not a string`);
const stringMap = (v, where) =>
  object(v, where, new Proxy({}, { has: () => true, get: () => string }));
const list = (check) => (v, where) =>
  Array.isArray(v) ? v.forEach((item, i) => check(item, `${where}/${i}`)) : problems.push(`${where}: not a list`);
const kube = (validate) => (v, where) => strict(validate, v, where);

// SandboxTemplate v1beta1, as its CRD (sandboxtemplates.extensions.agents.x-k8s.io)
// defines it: spec.podTemplate {metadata {labels, annotations}, spec: a
// PodSpec} is required; networkPolicy holds ingress and egress rules of
// NetworkPolicy's own types; networkPolicyManagement is Managed or
// Unmanaged; envVarsInjectionPolicy and volumeClaimTemplatesPolicy are
// Disallowed, Allowed or Overrides; service is a boolean; each of
// volumeClaimTemplates is {metadata {name, labels, annotations}, spec: a
// PersistentVolumeClaimSpec}.
function sandboxTemplate(doc, where) {
  object(doc, where, {
    apiVersion: oneOf("extensions.agents.x-k8s.io/v1beta1"),
    kind: oneOf("SandboxTemplate"),
    metadata: kube(objectMeta),
    spec: (spec, w) =>
      object(
        spec,
        w,
        {
          podTemplate: (t, w2) =>
            object(t, w2, { metadata: (m, w3) => object(m, w3, { labels: stringMap, annotations: stringMap }), spec: kube(podSpec) }, ["spec"]),
          networkPolicy: (n, w2) => object(n, w2, { ingress: list(kube(ingressRule)), egress: list(kube(egressRule)) }),
          networkPolicyManagement: oneOf("Managed", "Unmanaged"),
          envVarsInjectionPolicy: oneOf("Disallowed", "Allowed", "Overrides"),
          volumeClaimTemplatesPolicy: oneOf("Disallowed", "Allowed", "Overrides"),
          service: (v, w2) => typeof v === "boolean" || problems.push(`${w2}: not a boolean`),
          volumeClaimTemplates: list((t, w2) =>
            object(
              t,
              w2,
              {
                metadata: (m, w3) => object(m, w3, { name: string, labels: stringMap, annotations: stringMap }),
                spec: kube(pvcSpec),
              },
              ["spec"],
            ),
          ),
        },
        ["podTemplate"],
      ),
  }, ["apiVersion", "kind", "metadata", "spec"]);
}

const checks = { Pod: pod, NetworkPolicy: networkPolicy, ConfigMap: configMap };
const input = JSON.parse(readFileSync(0, "utf8"));
if (input.kind !== "List" || !Array.isArray(input.items)) problems.push("input: not a v1 List");
for (const [i, doc] of (input.items || []).entries()) {
  const where = `items/${i} (${doc.kind})`;
  if (doc.kind === "SandboxTemplate") sandboxTemplate(doc, where);
  else if (checks[doc.kind]) strict(checks[doc.kind], doc, where);
  else problems.push(`${where}: no schema for kind ${doc.kind}`);
}
for (const p of problems) console.log(p);
process.exit(problems.length ? 1 : 0);
