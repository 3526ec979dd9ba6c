// SPDX-License-Identifier: Apache-2.0
// validate.mjs — checks rendered Kubernetes manifests against the API schemas of
// npm's kubernetes-models (the OpenAPI schemas of Kubernetes 1.3x): every object must be
// a kind the API knows at its apiVersion and match its schema (types, required fields,
// enums). Those schemas let unknown fields through, as the API server's non-strict mode
// does; yamllint and review catch misspelt keys.
// Usage: node validate.mjs [--stagd] FILE.yaml...   (`-` reads stdin); prints one line
// per object, exits 1 naming each invalid one; --stagd adds stagd's own rules (below).
// deploy/test.sh renders the overlays into it.
import { readFileSync } from "node:fs";
import { parseAllDocuments } from "yaml";

async function modelClass(apiVersion, kind) {
  let mod;
  try {
    mod = await import(`kubernetes-models/${apiVersion}`);
  } catch {
    return null;
  }
  return mod[kind] ?? null;
}

// --stagd: the rules stagd's deployment relies on (docs/deploy.md "Kubernetes").
function stagdRules(objects) {
  const problems = [];
  const conf = objects.find((o) => o.kind === "ConfigMap" && o.metadata?.name === "stagd-config");
  const deploy = objects.find((o) => o.kind === "Deployment" && o.metadata?.name === "stagd");
  if (!conf || !deploy) return ["no ConfigMap/stagd-config or Deployment/stagd"];
  const timeout = /^shutdown-timeout-ms\s*=\s*(\d+)/m.exec(conf.data?.["stagd.conf"] ?? "");
  const pod = deploy.spec.template.spec;
  const grace = pod.terminationGracePeriodSeconds ?? 30;
  if (!timeout || grace * 1000 <= Number(timeout[1]))
    problems.push(`terminationGracePeriodSeconds ${grace} s must exceed shutdown-timeout-ms ${timeout?.[1]}`);
  const c = pod.containers.find((x) => x.name === "stagd");
  const grpcPort = c?.ports?.find((p) => p.name === "grpc")?.containerPort;
  for (const probe of ["startupProbe", "readinessProbe", "livenessProbe"])
    if (c?.[probe]?.grpc?.port !== grpcPort) problems.push(`${probe} must be a grpc probe on port ${grpcPort}`);
  if (pod.securityContext?.runAsNonRoot !== true) problems.push("the pod must run as non-root");
  if (c?.securityContext?.readOnlyRootFilesystem !== true) problems.push("the root filesystem must be read-only");
  if (c?.securityContext?.allowPrivilegeEscalation !== false) problems.push("privilege escalation must be off");
  const ann = deploy.spec.template.metadata?.annotations ?? {};
  if (ann["prometheus.io/scrape"] !== "true" || !ann["prometheus.io/port"])
    problems.push("the pods need prometheus.io/scrape and prometheus.io/port annotations");
  for (const kind of ["Service", "PodDisruptionBudget", "HorizontalPodAutoscaler", "NetworkPolicy", "Secret"])
    if (!objects.some((o) => o.kind === kind)) problems.push(`no ${kind}`);
  if (!objects.some((o) => o.kind === "Service" && o.spec?.clusterIP === "None")) problems.push("no headless Service");
  return problems;
}

const stagd = process.argv.includes("--stagd");
let failed = 0;
let checked = 0;
for (const file of process.argv.slice(2).filter((a) => a === "-" || !a.startsWith("--"))) {
  const objects = [];
  const text = readFileSync(file === "-" ? 0 : file, "utf8");
  for (const doc of parseAllDocuments(text)) {
    if (doc.errors.length) {
      console.log(`${file}: YAML error: ${doc.errors[0].message}`);
      failed++;
      continue;
    }
    const obj = doc.toJSON();
    if (obj === null) continue;
    const name = `${obj.kind}/${obj.metadata?.name ?? "?"}`;
    const Cls = obj.apiVersion && obj.kind ? await modelClass(obj.apiVersion, obj.kind) : null;
    if (!Cls) {
      console.log(`${file}: ${name}: unknown apiVersion/kind ${obj.apiVersion} ${obj.kind}`);
      failed++;
      continue;
    }
    try {
      new Cls(obj).validate();
      console.log(`ok ${obj.apiVersion} ${name}`);
      objects.push(obj);
      checked++;
    } catch (e) {
      console.log(`${file}: ${name}: ${e.message}`);
      failed++;
    }
  }
  if (stagd)
    for (const problem of stagdRules(objects)) {
      console.log(`${file}: stagd: ${problem}`);
      failed++;
    }
}
console.log(`${checked} objects valid, ${failed} invalid`);
process.exit(failed || !checked ? 1 : 0);
