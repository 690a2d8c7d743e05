// Compiled by .ci/openapi against the types openapi-typescript generates
// from spec/openapi.yaml (weir.ts beside this file there): a client can
// build the requests and read the responses the spec describes.
import type { components, paths } from "./weir";

type Schemas = components["schemas"];

// A task needs only a name and a command: queue, after, retries... are
// optional (a default in the spec would make openapi-typescript require
// them).
export const file: Schemas["WorkflowFile"] = { tasks: [{ name: "a", run: "echo a" }] };
export const yamlBody: paths["/v1/workflows"]["post"]["requestBody"]["content"]["application/yaml"] = file;

// A producer in TypeScript: a job for a Go handler needs only its queue;
// a task for a Go handler has a payload and a queue instead of run.
export const job: Schemas["JobRequest"] = { queue: "resize", payload: { url: "https://example.com/a.png", width: 640 } };
export const jobBody: paths["/v1/jobs"]["post"]["requestBody"]["content"]["application/json"] = { ...job, id: "img-1", retries: 3, delay: "10s" };
export const goTasks: Schemas["WorkflowFile"] = {
  tasks: [{ name: "charge", queue: "payments", payload: { order: 42 }, undo: { payload: { order: 42 } } }],
};

// Every field of the file format has a place in the types (the Go test of
// package rest validates every file of examples/ against the schema): a
// start time, a deadline, a webhook, a signal task, a delay, a chain's or
// batch's steps and callbacks.
export const approval: Schemas["WorkflowFile"] = {
  start_at: "2026-12-24T18:00:00Z",
  deadline: "2h",
  webhook: { url: "https://example.com/hook", secret: "billing", attempts: 5, backoff: "2s" },
  tasks: [
    { name: "build", run: "echo built", key: "tenant-7", priority: -1, max_expiries: 0 },
    { name: "approve", after: ["build"], signal: true, timeout: "24h" },
    { name: "deploy", after: ["approve"], run: "echo deploy", delay: "10m", on_failure: false },
  ],
};
export const batch: Schemas["WorkflowFile"] = {
  batch: {
    name: "emails",
    allow_failures: true,
    steps: [{ name: "ana", run: "./send.sh ana", retries: 2 }],
    then: { run: "./report.sh ok" },
    catch: { run: "./report.sh failed", queue: "reports" },
    finally: { run: "./cleanup.sh", undo: { run: "true" } },
  },
};
export function jobResult(j: paths["/v1/jobs"]["post"]["responses"]["201"]["content"]["application/json"]): Schemas["Value"] {
  return j.result;
}

// The list's query parameters are all optional.
export const query: NonNullable<paths["/v1/workflows"]["get"]["parameters"]["query"]> = {};

// Records: a task's undo and its state may be null, a result any value.
export function undoState(w: Schemas["Workflow"]): Schemas["TaskState"] | null {
  const undo = w.tasks[0].undo;
  return undo === null ? null : undo.state;
}
export const result: Schemas["Value"] = { lines: ["a", 1, true, null, { nested: null }] };
export const created: Schemas["Time"] = "2026-12-02T18:07:15.500Z";

// Every operation has an Error body for any status.
export type SubmitError = paths["/v1/workflows"]["post"]["responses"]["default"]["content"]["application/json"];
export const refused: SubmitError = { code: "MEDIATYPE", message: "send application/json", field: "Content-Type" };
