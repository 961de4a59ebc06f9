// The DynamoDB-Toolbox side of `cargo run --example toolbox`, on the table the example created:
//   node toolbox.mjs seed   <endpoint> <table>   writes users and tasks through DynamoDB-Toolbox
//   node toolbox.mjs verify <endpoint> <table>   reads back what ddb-model updated and created
//                                                (Toolbox's formatter checks every attribute
//                                                against the schema), and compares each item
//                                                ddb-model created with Toolbox's own
// Exits non-zero, naming the difference, when anything disagrees.
import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import {
  Entity,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  Table,
  item,
  number,
  string,
} from "dynamodb-toolbox";
import { isDeepStrictEqual } from "node:util";
import { peerSide } from "./common.mjs";

const { mode, table: tableName, client, fail, expect, raw, remove } = peerSide("toolbox");
const documentClient = DynamoDBDocumentClient.from(client);

const table = new Table({
  name: tableName,
  partitionKey: { name: "pk", type: "string" },
  sortKey: { name: "sk", type: "string" },
  indexes: {
    byStatus: {
      type: "global",
      partitionKey: { name: "gsi1pk", type: "string" },
      sortKey: { name: "gsi1sk", type: "string" },
    },
  },
  documentClient,
});

const User = new Entity({
  name: "User",
  schema: item({
    userId: string().key(),
    name: string(),
    email: string().optional(),
  }),
  computeKey: ({ userId }) => ({ pk: `USER#${userId}`, sk: "PROFILE" }),
  table,
});

const Task = new Entity({
  name: "Task",
  schema: item({
    userId: string().key(),
    taskId: string().key(),
    title: string(),
    status: string().enum("open", "done"),
    due: string(),
    points: number().optional(),
  }).and((prev) => ({
    gsi1pk: string().link(({ status }) => `STATUS#${status}`),
    gsi1sk: string().link(({ due, taskId }) => `${due}#${taskId}`),
  })),
  computeKey: ({ userId, taskId }) => ({ pk: `USER#${userId}`, sk: `TASK#${taskId}` }),
  table,
});

// Deletes the item ddb-model created, lets Toolbox write the same entity under the same keys,
// and compares the two stored items attribute for attribute (the timestamps `_ct` and `_md`
// by their format: both are ISO-8601 in milliseconds).
async function sameAsOwn(entity, values, keys) {
  const theirs = await raw(...keys);
  expect(theirs !== undefined, `ddb-model's item at ${keys} is missing`);
  await remove(theirs);
  await entity.build(PutItemCommand).item(values).send();
  const own = await raw(...keys);
  const iso = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
  for (const stamp of ["_ct", "_md"]) {
    expect(iso.test(theirs[stamp]?.S ?? ""), `ddb-model's ${stamp} at ${keys} is not ISO-8601 in ms`, theirs);
    delete theirs[stamp];
    delete own[stamp];
  }
  expect(isDeepStrictEqual(theirs, own), `the item ddb-model created at ${keys} differs from Toolbox's own`, {
    ddbModel: theirs,
    toolbox: own,
  });
}

if (mode === "seed") {
  await User.build(PutItemCommand).item({ userId: "Ann-01", name: "Ann", email: "ann@example.com" }).send();
  await User.build(PutItemCommand).item({ userId: "Bob-02", name: "Bob" }).send();
  const tasks = [
    { userId: "Ann-01", taskId: "T-100", title: "Write the plan", status: "open", due: "2026-01-05T10:00:00.000Z", points: 3 },
    { userId: "Ann-01", taskId: "T-101", title: "Review the plan", status: "open", due: "2026-01-07T09:30:00.000Z", points: 1 },
    { userId: "Ann-01", taskId: "T-102", title: "Ship it", status: "done", due: "2026-01-02T17:00:00.000Z" },
    { userId: "Bob-02", taskId: "T-103", title: "Book the room", status: "open", due: "2026-01-06T08:00:00.000Z" },
  ];
  for (const t of tasks) await Task.build(PutItemCommand).item(t).send();
} else if (mode === "verify") {
  // ddb-model marked T-100 done: Toolbox reads it (its formatter validates every attribute)
  // and finds it by its new status only.
  const { Item: t100 } = await Task.build(GetItemCommand).key({ userId: "Ann-01", taskId: "T-100" }).send();
  expect(t100?.status === "done", "T-100 is not done", t100);
  const open = await table.build(QueryCommand).entities(Task).query({ index: "byStatus", partition: "STATUS#open" }).send();
  expect(!open.Items.some((t) => t.taskId === "T-100"), "T-100 is still listed as open", open.Items);
  const done = await table
    .build(QueryCommand)
    .entities(Task)
    .query({ index: "byStatus", partition: "STATUS#done", range: { gte: "2026-01-03" } })
    .send();
  expect(done.Items.map((t) => t.taskId).join() === "T-100", "done tasks due from Jan 3", done.Items);
  // ddb-model cleared T-101's points: the attribute is gone, not NULL (Toolbox refuses NULL).
  const { Item: t101 } = await Task.build(GetItemCommand).key({ userId: "Ann-01", taskId: "T-101" }).send();
  expect(t101 && t101.points === undefined, "T-101's points were not removed", t101);
  // What ddb-model created: a user and a task in one partition, read through Toolbox.
  const cara = await table.build(QueryCommand).entities(User, Task).query({ partition: "USER#Cara-03" }).send();
  expect(cara.Items.length === 2, "Cara's partition", cara.Items);
  await sameAsOwn(User, { userId: "Cara-03", name: "Cara" }, ["USER#Cara-03", "PROFILE"]);
  await sameAsOwn(
    Task,
    { userId: "Cara-03", taskId: "T-200", title: "Plan the next sprint", status: "open", due: "2026-02-01T12:00:00.000Z", points: 5 },
    ["USER#Cara-03", "TASK#T-200"],
  );
  console.log("toolbox: every item reads back, and the created ones match Toolbox's own");
} else {
  fail(`usage: node toolbox.mjs seed|verify <endpoint> <table> (got ${mode})`);
}
