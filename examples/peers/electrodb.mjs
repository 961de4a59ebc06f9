// The ElectroDB side of `cargo run --example electrodb`, on the table the example created:
//   node electrodb.mjs seed   <endpoint> <table>   writes users and tasks through ElectroDB
//   node electrodb.mjs verify <endpoint> <table>   reads back what ddb-model updated and
//                                                  created, and compares each item ddb-model
//                                                  created with the one ElectroDB writes itself
// Exits non-zero, naming the difference, when anything disagrees.
import { Entity, Service } from "electrodb";
import { isDeepStrictEqual } from "node:util";
import { peerSide } from "./common.mjs";

const { mode, table, client, fail, expect, raw, remove } = peerSide("electrodb");

const user = new Entity(
  {
    model: { entity: "user", version: "1", service: "taskapp" },
    attributes: {
      userId: { type: "string", required: true },
      name: { type: "string", required: true },
      email: { type: "string" },
    },
    indexes: {
      byId: {
        pk: { field: "pk", composite: ["userId"] },
        sk: { field: "sk", composite: [] },
      },
      workspace: {
        index: "gsi1",
        collection: "workspace",
        pk: { field: "gsi1pk", composite: ["userId"] },
        sk: { field: "gsi1sk", composite: [] },
      },
    },
  },
  { client, table },
);

const task = new Entity(
  {
    model: { entity: "task", version: "1", service: "taskapp" },
    attributes: {
      taskId: { type: "string", required: true },
      userId: { type: "string", required: true },
      title: { type: "string", required: true },
      status: { type: ["open", "done"], required: true },
      due: { type: "string", required: true },
      sprint: { type: "number", required: true },
      notes: { type: "string" },
    },
    indexes: {
      byId: {
        pk: { field: "pk", composite: ["taskId"] },
        sk: { field: "sk", composite: [] },
      },
      workspace: {
        index: "gsi1",
        collection: "workspace",
        pk: { field: "gsi1pk", composite: ["userId"] },
        sk: { field: "gsi1sk", composite: ["taskId"] },
      },
      byStatus: {
        index: "gsi2",
        pk: { field: "gsi2pk", composite: ["status"] },
        sk: { field: "gsi2sk", composite: ["due", "taskId"] },
      },
      bySprint: {
        index: "gsi3",
        pk: { field: "gsi3pk", composite: ["sprint"] },
        sk: { field: "gsi3sk", composite: ["taskId"] },
      },
    },
  },
  { client, table },
);

const app = new Service({ user, task });

// Deletes the item ddb-model created, lets ElectroDB write the same entity under the same
// keys, and compares the two stored items attribute for attribute.
async function sameAsOwn(entity, key, values, keys) {
  const theirs = await raw(...keys);
  expect(theirs !== undefined, `ddb-model's ${entity.schema?.model?.entity ?? "item"} at ${keys} is missing`);
  await remove(theirs);
  await entity.create(values).go();
  const own = await raw(...keys);
  expect(isDeepStrictEqual(theirs, own), `the item ddb-model created at ${keys} differs from ElectroDB's own`, {
    ddbModel: theirs,
    electrodb: own,
  });
}

if (mode === "seed") {
  await user.put({ userId: "Ann-01", name: "Ann", email: "ann@example.com" }).go();
  await user.put({ userId: "Bob-02", name: "Bob" }).go();
  const tasks = [
    { taskId: "T-100", userId: "Ann-01", title: "Write the plan", status: "open", due: "2026-01-05T10:00:00.000Z", sprint: 5 },
    { taskId: "T-101", userId: "Ann-01", title: "Review the plan", status: "open", due: "2026-01-07T09:30:00.000Z", sprint: 5, notes: "after the plan" },
    { taskId: "T-102", userId: "Ann-01", title: "Ship it", status: "done", due: "2026-01-02T17:00:00.000Z", sprint: 4 },
    { taskId: "T-103", userId: "Bob-02", title: "Book the room", status: "open", due: "2026-01-06T08:00:00.000Z", sprint: 12 },
  ];
  for (const t of tasks) await task.put(t).go();
} else if (mode === "verify") {
  // ddb-model marked T-100 done: ElectroDB reads it, and finds it by its new status only.
  const t100 = await task.get({ taskId: "T-100" }).go();
  expect(t100.data?.status === "done", "T-100 is not done", t100.data);
  const open = await task.query.byStatus({ status: "open" }).go();
  expect(!open.data.some((t) => t.taskId === "T-100"), "T-100 is still listed as open", open.data);
  const done = await task.query.byStatus({ status: "done" }).gte({ due: "2026-01-03" }).go();
  expect(done.data.map((t) => t.taskId).join() === "T-100", "done tasks due from Jan 3", done.data);
  // ddb-model cleared T-101's notes: the attribute is gone, not NULL.
  const t101 = await raw("$taskapp#taskid_t-101", "$task_1");
  expect(t101 && !("notes" in t101), "T-101's notes were not removed", t101);
  // What ddb-model created: a user and a task, found through the collection and the indexes.
  const cara = await app.collections.workspace({ userId: "Cara-03" }).go();
  expect(cara.data.user.length === 1 && cara.data.task.length === 1, "Cara's workspace", cara.data);
  const sprint = await task.query.bySprint({ sprint: 7 }).go();
  expect(sprint.data.map((t) => t.taskId).join() === "T-200", "sprint 7", sprint.data);
  await sameAsOwn(user, { userId: "Cara-03" }, { userId: "Cara-03", name: "Cara" }, ["$taskapp#userid_cara-03", "$user_1"]);
  await sameAsOwn(
    task,
    { taskId: "T-200" },
    { taskId: "T-200", userId: "Cara-03", title: "Plan the next sprint", status: "open", due: "2026-02-01T12:00:00.000Z", sprint: 7 },
    ["$taskapp#taskid_t-200", "$task_1"],
  );
  console.log("electrodb: every item reads back, and the created ones match ElectroDB's own");
} else {
  fail(`usage: node electrodb.mjs seed|verify <endpoint> <table> (got ${mode})`);
}
