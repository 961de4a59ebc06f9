// What both peer scripts share: the command line, the client, the checks, raw item access.
import { DeleteItemCommand, DynamoDBClient, GetItemCommand } from "@aws-sdk/client-dynamodb";

// `node <script> seed|verify <endpoint> <table>`, for the peer named `peer` in messages.
export function peerSide(peer) {
  const [mode, endpoint, table] = process.argv.slice(2);
  const client = new DynamoDBClient({
    endpoint,
    region: "us-east-1",
    credentials: { accessKeyId: "local", secretAccessKey: "local" },
  });
  const fail = (message, detail) => {
    console.error(`${peer}: ${message}`);
    if (detail !== undefined) console.error(JSON.stringify(detail, null, 2));
    process.exit(1);
  };
  const expect = (ok, message, detail) => {
    if (!ok) fail(message, detail);
  };
  // The stored item at (pk, sk), read consistently, as DynamoDB JSON.
  const raw = async (pk, sk) => {
    const key = { pk: { S: pk }, sk: { S: sk } };
    const out = await client.send(new GetItemCommand({ TableName: table, Key: key, ConsistentRead: true }));
    return out.Item;
  };
  const remove = (item) => client.send(new DeleteItemCommand({ TableName: table, Key: { pk: item.pk, sk: item.sk } }));
  return { mode, table, client, fail, expect, raw, remove };
}
